// NVIDIA OpenCL and sm_90a-only PTX (wgmma): does a source build take it, and does a re-targeted
// PTX binary? Built and run on the GPU machine:
//   g++ -O1 -o /tmp/wgprobe wgprobe.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lOpenCL
//   OCL_ICD_FILENAMES=libnvidia-opencl.so.1 /tmp/wgprobe
// Output of both versions (the first patched the .target line wrongly): wgprobe-output.txt.
// Can NVIDIA's OpenCL build a kernel that uses sm_90a-only PTX (wgmma)?
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
static cl_context ctx; static cl_device_id dev; static cl_command_queue q;
static std::string log_of(cl_program p){ size_t n=0; clGetProgramBuildInfo(p,dev,CL_PROGRAM_BUILD_LOG,0,0,&n); std::string s(n,' '); clGetProgramBuildInfo(p,dev,CL_PROGRAM_BUILD_LOG,n,&s[0],0); return s; }
static std::string bin_of(cl_program p){ size_t n=0; clGetProgramInfo(p,CL_PROGRAM_BINARY_SIZES,sizeof n,&n,0); std::string s(n,'\0'); char*b=&s[0]; clGetProgramInfo(p,CL_PROGRAM_BINARIES,sizeof b,&b,0); return s; }
static int run(cl_program p,const char*name){ cl_int e; cl_kernel k=clCreateKernel(p,name,&e); if(e){printf("  createKernel %d\n",e);return 1;}
  cl_mem m=clCreateBuffer(ctx,CL_MEM_READ_WRITE,128*4,0,&e); clSetKernelArg(k,0,sizeof m,&m); size_t g=128,l=128;
  e=clEnqueueNDRangeKernel(q,k,1,0,&g,&l,0,0,0); float h[128]={0}; cl_int e2=clEnqueueReadBuffer(q,m,CL_TRUE,0,sizeof h,h,0,0,0);
  printf("  launch %d read %d out[0]=%g out[127]=%g\n",e,e2,h[0],h[127]); return 0;}
static void try_src(const char* src,const char* opts){ cl_int e; cl_program p=clCreateProgramWithSource(ctx,1,&src,0,&e);
  e=clBuildProgram(p,1,&dev,opts,0,0); printf("== source build opts='%s': %d\n",opts,e); std::string l=log_of(p); printf("%.1500s\n",l.c_str());
  if(e==0){ std::string b=bin_of(p); size_t t=b.find(".target"); printf("  %.40s\n", t==std::string::npos?"(no .target)":b.c_str()+t); run(p,"k"); }}
int main(){ cl_uint np; cl_platform_id ps[8]; clGetPlatformIDs(8,ps,&np); cl_platform_id pf=0;
  for(cl_uint i=0;i<np;i++){char n[256];clGetPlatformInfo(ps[i],CL_PLATFORM_NAME,256,n,0); if(strstr(n,"NVIDIA")) pf=ps[i];}
  if(!pf){puts("no NVIDIA platform");return 1;} clGetDeviceIDs(pf,CL_DEVICE_TYPE_GPU,1,&dev,0); cl_int e;
  ctx=clCreateContext(0,1,&dev,0,0,&e); q=clCreateCommandQueueWithProperties(ctx,dev,0,&e);
  const char* plain="__kernel void k(__global float* o){ o[get_global_id(0)] = 1.0f; }";
  const char* wg="__kernel void k(__global float* o){ __asm__ volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); o[get_global_id(0)] = 2.0f; }";
  try_src(plain,"-cl-nv-verbose");
  try_src(wg,"-cl-nv-verbose");
  try_src(wg,"-cl-nv-verbose -cl-nv-arch sm_90a");
  try_src(wg,"-cl-nv-arch=sm_90a");
  try_src(plain,"-cl-nv-verbose -cl-nv-arch sm_90a");
  // Binary route: the plain kernel's PTX with .target sm_90a and a wgmma.fence.
  cl_program p=clCreateProgramWithSource(ctx,1,&plain,0,&e); clBuildProgram(p,1,&dev,"",0,0); std::string b=bin_of(p);
  while(!b.empty()&&b.back()=='\0') b.pop_back();
  size_t t=b.find(".target sm_90"); if(t==std::string::npos){puts("no .target sm_90 in binary"); printf("%.600s\n",b.c_str()); return 0;}
  b.replace(t,13,".target sm_90a");
  size_t r=b.rfind("ret;"); b.insert(r,"wgmma.fence.sync.aligned;\n\t");
  size_t s=b.find("st.global"); if(s!=std::string::npos) printf("  store: %.60s\n",b.c_str()+s);
  // make it write 3.0: replace the 1.0 immediate (0f3F800000) with 3.0 (0f40400000)
  size_t c=b.find("0f3F800000"); if(c!=std::string::npos) b.replace(c,10,"0f40400000");
  const unsigned char* bp=(const unsigned char*)b.c_str(); size_t bn=b.size()+1; cl_int st;
  cl_program p2=clCreateProgramWithBinary(ctx,1,&dev,&bn,&bp,&st,&e); printf("== binary sm_90a create %d status %d\n",e,st);
  e=clBuildProgram(p2,1,&dev,"-cl-nv-verbose",0,0); printf("== binary build %d\n%.1500s\n",e,log_of(p2).c_str()); if(e==0) run(p2,"k");
  printf("--- patched PTX head ---\n%.300s\n",b.c_str());
  { const char* mk="__kernel void k(__global float* o){ float v=4.0f; __asm__ volatile(\"//SM90A wgmma.fence.sync.aligned; // %0\" : \"+f\"(v) :: \"memory\"); o[get_global_id(0)] = v; }";
    cl_program p3=clCreateProgramWithSource(ctx,1,&mk,0,&e); e=clBuildProgram(p3,1,&dev,"",0,0); printf("== marker source build %d\n",e);
    std::string b3=bin_of(p3); while(!b3.empty()&&b3.back()=='\0') b3.pop_back();
    size_t m=b3.find("//SM90A"); printf("  marker line: %.80s\n", m==std::string::npos?"(none)":b3.c_str()+m);
    size_t t3=b3.find(".target sm_90,"); if(t3!=std::string::npos) b3.replace(t3,13,".target sm_90a");
    while((m=b3.find("//SM90A "))!=std::string::npos) b3.erase(m,8);
    const unsigned char* bp3=(const unsigned char*)b3.c_str(); size_t bn3=b3.size()+1;
    cl_program p4=clCreateProgramWithBinary(ctx,1,&dev,&bn3,&bp3,&st,&e); e=clBuildProgram(p4,1,&dev,"-cl-nv-verbose",0,0);
    printf("== marker binary build %d\n%.800s\n",e,log_of(p4).c_str()); if(e==0) run(p4,"k"); }
  return 0; }
