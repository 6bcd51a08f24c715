#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ghm_image.h"
#include "ghm_edges.h"
#include "ghm_distance.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
static unsigned long long fnv(unsigned long long h,const void*p,size_t n){const unsigned char*c=p;for(size_t i=0;i<n;i++){h^=c[i];h*=1099511628211ull;}return h;}
int main(int argc,char**argv){
  GhmImage*img=NULL;char why[256];
  if(ghm_image_load(argv[1],&img,why,sizeof why)){fprintf(stderr,"%s\n",why);return 1;}
  int it=argc>2?atoi(argv[2]):50;
  GhmEdgeParams ep=ghm_edge_defaults();GhmCornerParams cp=ghm_corner_defaults();
  double te=1e9,tc=1e9,td=1e9;unsigned long long h=1469598103934665603ull;
  for(int k=0;k<it;k++){
    GhmEdges*e=NULL;double t0=now();
    if(ghm_edges_detect(img,&ep,&e))return 2;
    double t1=now();GhmCorner*c=NULL;size_t nc=0;
    if(ghm_corners_detect(e,&cp,&c,&nc))return 3;
    double t2=now();size_t np=(size_t)e->width*e->height;
    int32_t*nr=malloc(np*4);float*d2=malloc(np*4);
    if(ghm_distance_transform(e->width,e->height,e->pixel_point,nr,k==0?d2:NULL))return 4;
    double t3=now();
    if(t1-t0<te)te=t1-t0; if(t2-t1<tc)tc=t2-t1; if(t3-t2<td)td=t3-t2;
    if(k==0){h=fnv(h,e->points,e->count*sizeof*e->points);h=fnv(h,e->pixel_point,np*4);
      h=fnv(h,&e->threshold,4);h=fnv(h,&e->noise,4);h=fnv(h,c,nc*sizeof*c);h=fnv(h,nr,np*4);h=fnv(h,d2,np*4);
      printf("pts %zu corners %zu ",e->count,nc);}
    free(nr);free(d2);free(c);ghm_edges_free(&e);
  }
  printf("hash %016llx  min ms: edges %.3f corners %.3f dist %.3f\n",h,te,tc,td);
  return 0;}
