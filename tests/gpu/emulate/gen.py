"""Writes the emulated kernel (attention.cu with its inline-PTX helpers replaced by helpers.h and e4m3.h, CUDA
keywords by C++) to the path given: python3 gen.py OUT.h (run from the repository root)."""
import sys

src = open('gpu-endpoint/src/backend/cuda/attention.cu').read()
a = src.index('__device__ __forceinline__ float neg_inf()')
b = src.index('// Where the stored tiles go')
src = src[:a] + '#include "helpers.h"\n' + src[b:]
a = src.index('__device__ __forceinline__ u32 e4m3x2_to_mma')
b = src.index('// FP8 rows (')
src = src[:a] + '#include "e4m3.h"\n' + src[b:]
for old, new in [
    ('extern __shared__ __align__(16) unsigned char smem_raw[];', 'unsigned char* smem_raw = g_block->smem.data();'),
    ('__shared__ int is_last;', 'static int is_last;'),
    ('extern "C" __global__ void __launch_bounds__(THREADS)', 'void'),
    ('__device__ ', ''),
    ('__forceinline__ ', ''),
]:
    if old not in src:
        sys.exit(f'gen.py: "{old}" not found in attention.cu; update the emulation')
    src = src.replace(old, new)
open(sys.argv[1], 'w').write(src)
