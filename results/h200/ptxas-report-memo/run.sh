set -u
G=/tmp/gl; xz -dc .gpu/gemmlab.xz > $G; chmod +x $G
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cc-fresh; rm -rf $CUDA_CACHE_PATH
for i in 1 2; do
  /usr/bin/time -f "wall %e s" timeout 150 $G compare --device h200 --backends cuda,opencl --kernels 6,11,simt --sizes 1024,2048,4096 --reps 5 --out $OUT/compare-$i > $OUT/compare-$i.txt 2>&1; echo "exit $?" >> $OUT/compare-$i.txt
  python3 - $OUT/compare-$i <<'PY'
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]+'/measurements.jsonl')]
known=sum(1 for r in rows if r['kernel']!='cublas' and (r.get('resources') or {}).get('spill_stores_bytes') is not None)
total=sum(1 for r in rows if r['kernel']!='cublas')
ms=[r.get('compile_ms') for r in rows if r['kernel']!='cublas']
print(sys.argv[1].split('/')[-1], f"spills known {known}/{total}", "compile_ms", [round(x) if x else x for x in ms])
PY
done
GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1 CUDA_CACHE_PATH=/tmp/cc-tests bash -c 'xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/ck; chmod +x /tmp/ck; timeout 280 /tmp/ck --test-threads=1' > $OUT/cuda_kernels.txt 2>&1; echo "exit $?" >> $OUT/cuda_kernels.txt
grep -E "test result|exit" $OUT/cuda_kernels.txt
