#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "ghm_image.h"
#include "ghm_edges.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
int main(int argc,char**argv){
  GhmImage*img=NULL;char why[256];
  if(ghm_image_load(argv[1],&img,why,sizeof why))return 1;
  double cell=atof(argv[2]); GhmEdgeParams ep=ghm_edge_defaults();
  GhmEdges*e=NULL; if(ghm_edges_detect(img,&ep,&e))return 2;
  size_t n=e->count; uint32_t*idx=malloc(n*4); double tg=1e9; size_t kk=0;
  for(int k=0;k<40;k++){ double t0=now(); if(ghm_edges_grid_sample(e->points,n,e->width,e->height,cell,idx,&kk))return 4; double t=now()-t0; if(t<tg)tg=t; }
  printf("%s cell %.1f pts %zu kept %zu min ms %.3f\n",argv[1],cell,n,kk,tg); return 0;}
