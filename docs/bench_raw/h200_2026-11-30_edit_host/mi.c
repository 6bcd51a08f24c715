#include <stdio.h>
#include <sys/sysinfo.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(void){
  double t0=now(); unsigned long long kb=0;
  for(int i=0;i<100;i++){FILE*f=fopen("/proc/meminfo","r"); char line[128]; while(f&&fgets(line,sizeof line,f)) if(sscanf(line,"MemAvailable: %llu kB",&kb)==1) break; if(f) fclose(f);}
  double t1=now(); struct sysinfo si; for(int i=0;i<100;i++) sysinfo(&si); double t2=now();
  printf("meminfo %.1f us, sysinfo %.2f us, avail %llu MB free %lu MB\n", (t1-t0)*1e4, (t2-t1)*1e4, kb/1024, si.freeram*si.mem_unit>>20);
}
