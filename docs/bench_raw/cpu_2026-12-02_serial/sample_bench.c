/* the matcher's samplings of a reference: capped (point_cell 3, 12000) and the check grids 2..,
 * min over repetitions; prints a hash of the kept indices */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ghm_image.h"
#include "ghm_edges.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
static unsigned long long fnv(unsigned long long h,const void*p,size_t n){const unsigned char*c=p;for(size_t i=0;i<n;i++){h^=c[i];h*=1099511628211ull;}return h;}
int main(int argc,char**argv){
  GhmImage*img=NULL;char why[256];
  if(ghm_image_load(argv[1],&img,why,sizeof why)){fprintf(stderr,"%s\n",why);return 1;}
  int it=argc>2?atoi(argv[2]):50;
  GhmEdgeParams ep=ghm_edge_defaults();
  GhmEdges*e=NULL; if(ghm_edges_detect(img,&ep,&e))return 2;
  size_t n=e->count; uint32_t*idx=malloc(n*4); double tc=1e9,tg=1e9; unsigned long long h=1469598103934665603ull;
  for(int k=0;k<it;k++){
    size_t kept=0; double cellu=0; double t0=now();
    if(ghm_edges_sample_capped(e->points,n,e->width,e->height,3.0,12000,idx,&kept,&cellu))return 3;
    double t1=now(); if(k==0){h=fnv(h,idx,kept*4);}
    for(int g=0; g<5; g++){ size_t kk=0; if(ghm_edges_grid_sample(e->points,n,e->width,e->height,(g?2.0*(1<<g):1.0),idx,&kk))return 4; if(k==0)h=fnv(h,idx,kk*4);} 
    double t2=now(); if(t1-t0<tc)tc=t1-t0; if(t2-t1<tg)tg=t2-t1;
  }
  printf("%s pts %zu hash %016llx min ms: capped %.3f grids %.3f\n",argv[1],n,h,tc,tg);
  return 0;}
