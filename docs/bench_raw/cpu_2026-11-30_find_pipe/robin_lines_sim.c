#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
static uint64_t s=88172645463325252ull; static uint64_t rnd(){s^=s<<13;s^=s>>7;s^=s<<17;return s;}
#define MAXA 15
static uint32_t fmix(uint32_t h){h^=h>>16;h*=0x85ebca6b;h^=h>>13;h*=0xc2b2ae35;return h^(h>>16);}
static uint32_t morton2(uint32_t x,uint32_t y){uint32_t k=0;for(int b=0;b<16;b++)k|=(x>>b&1u)<<(2*b)|(y>>b&1u)<<(2*b+1);return k;}
static int isprime(uint32_t c){if(c<2)return 0;for(uint32_t d=2;(uint64_t)d*d<=c;d++)if(c%d==0)return 0;return 1;}
int main(int argc,char**argv){ const char*kind=argv[1]; double load=atof(argv[2]); int nsmall=atoi(argv[3]); int lg=atoi(argv[4]); uint64_t seed=argc>5?atoi(argv[5]):1;
 s^=seed*0x9E3779B97F4A7C15ull; rnd();
 uint32_t *keys; size_t n=0;
 if(!strcmp(kind,"random")){ n=(size_t)1<<lg; keys=malloc(n*4); for(size_t i=0;i<n;i++) keys[i]=fmix((uint32_t)(i+1+seed*1000003)); }
 else { uint32_t side=1u<<(lg/2); keys=malloc((size_t)side*side*4); int mort=!strcmp(kind,"morton");
   for(uint32_t y=0;y<side;y++)for(uint32_t x=0;x<side;x++){ int def= fmix((y/64*65536u+x/64)^(uint32_t)seed)%3==0 || fmix((y*65536u+x)^0x5555u^(uint32_t)seed)%32==0; if(def) keys[n++]= mort?morton2(x,y):y*side+x; } }
 uint32_t cap=(uint32_t)(n/load); while(!isprime(cap))cap++;
 uint32_t off[MAXA+2]; for(int i=0;i<=MAXA+1;i++) off[i]= i<2?0: (i-1<=nsmall? (uint32_t)(i-1) : rnd()%cap);
 uint64_t *t=calloc(cap,8); int stash=0;
 for(size_t i=0;i<n;i++){ uint64_t w=(1ull<<40)|keys[i]; for(;;){ uint32_t age=w>>40; uint32_t k=(uint32_t)w; if(age>MAXA){stash++;break;} uint32_t p=(uint32_t)(((uint64_t)(k%cap)+off[age])%cap); uint64_t r=t[p]; if(r<w){t[p]=w; if(!r)break; w=r;} w+=1ull<<40; } }
 uint8_t *mat=calloc(cap,1); int oldest=0; long hist[17]={0};
 for(uint32_t p=0;p<cap;p++) if(t[p]){uint32_t k=(uint32_t)t[p],a=t[p]>>40; uint32_t h=k%cap; if(mat[h]<a)mat[h]=a; if(a>oldest)oldest=a; hist[a]++;}
 double pl=0,ps=0,pa=0; long cnt=0;
 for(uint32_t p=0;p<cap;p++) if(t[p]){uint32_t k=(uint32_t)t[p],a=t[p]>>40,h=k%cap; long pL=-1,pS=-1; for(uint32_t j=1;j<=a;j++){uint64_t q=((uint64_t)h+off[j])%cap; if((long)(q/8)!=pL){pl++;pL=q/8;} if((long)(q/4)!=pS){ps++;pS=q/4;}} pa+=a; cnt++;}
 double al=0,as=0; int N=1000000;
 for(int q=0;q<N;q++){ uint32_t k=(uint32_t)rnd(); uint32_t h=k%cap; long pL=h/8,pS=h/4; al+=1; as+=1; if(!t[h]) continue; uint32_t m=mat[h];
   for(uint32_t a=2;a<=m;a++){ uint32_t p=(uint32_t)(((uint64_t)h+off[a])%cap); if((long)(p/8)!=pL){al++;pL=p/8;} if((long)(p/4)!=pS){as++;pS=p/4;} if(!t[p])break; } }
 printf("%-7s n %zu load %.2f small %d seed %llu: stash %d oldest %d | present age %.2f lines %.3f sectors %.3f | absent(rand) lines %.3f sectors %.3f\n",kind,n,load,nsmall,(unsigned long long)seed,stash,oldest,pa/cnt,pl/cnt,ps/cnt,al/N,as/N);
}
