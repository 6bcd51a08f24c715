#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int c,char**v){ FILE*f=fopen(v[1],"rb"); char line[256]; fgets(line,256,f);
 size_t luma=1920*1080; int mode=atoi(v[2]); int n=0; double t0=now(); void *keep[32]={0};
 for(;;){ if(!fgets(line,256,f))break; unsigned char*p= mode==0? calloc(luma,1): malloc(luma);
   if(fread(p,1,luma,f)!=luma){free(p);break;}
   /* hold frames in a ring as the pipeline does, freed later */
   free(keep[n%32]); keep[n%32]=p; n++; }
 double t=now()-t0; printf("mode %d: %d frames %.0f fps %.3f ms/frame\n",mode,n,n/t,1e3*t/n); return 0;}
