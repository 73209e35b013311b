// myGEMM5 -- transposed B, rectangular tiles, padded shared memory, CUDA twin.
//
// Idea: kernel 3 (WPT elements of C per thread along N, strided by
// RTS = TS/WPT) with two changes. (1) B arrives pre-transposed (BT, N x K),
// so the B tile can be read from global memory along N, coalesced, just
// like A is read along M. (2) The tiles are TS x TSDK in K, decoupling the
// K depth of a tile from TS: each thread copies LPT = TSDK*WPT/TS elements
// of A and of BT per tile. The B tile is stored as Bsub[n][k] with rows
// padded to TSDK+2 floats so that the column-wise stores do not all hit the
// same shared-memory bank.
//
// Parameters: TS (tile size along M and N), WPT (work per thread along N),
//             TSDK (tile depth along K).
// Derived: RTS = TS/WPT (block size along N), LPT = TSDK*WPT/TS
//          (elements of A and of BT each thread loads per tile).
// Launch: block (TS, TS/WPT), grid (M/TS, N/TS), i.e. NDRange (M, N/WPT).
// Assumes: column-major A (MxK) and C (MxN); B TRANSPOSED: the B argument
//          holds BT (N x K column-major, B(k,n) = BT[k*N + n]); M and N
//          multiples of TS, K a multiple of TSDK; TS a multiple of WPT;
//          TSDK*WPT a multiple of TS.
// Shared memory: TSDK*TS + TS*(TSDK+2) floats.
// Twin differences: none beyond syntax.

#ifndef TS
#define TS 32
#endif
#ifndef WPT
#define WPT 8
#endif
#ifndef TSDK
#define TSDK 16
#endif

#define RTS (TS / WPT)
#define LPT ((TSDK * WPT) / TS)

#if (TS % WPT) != 0
#error "myGEMM5: TS must be a multiple of WPT"
#endif
#if ((TSDK * WPT) % TS) != 0
#error "myGEMM5: TSDK*WPT must be a multiple of TS"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(TS, RTS)
void myGEMM5(const int M, const int N, const int K,
             const float* __restrict__ A,
             const float* __restrict__ B,
             float* C) {
    const int row = (int)threadIdx.x;                // 0..TS-1
    const int col = (int)threadIdx.y;                // 0..RTS-1
    const int offsetM = TS * (int)blockIdx.x;
    const int offsetN = TS * (int)blockIdx.y;
    const int tid = col * TS + row;                  // linear id in the block

    __shared__ float Asub[TSDK][TS];                 // Asub[k][m]
    __shared__ float Bsub[TS][TSDK + 2];             // Bsub[n][k], padded

    float acc[WPT];
    GEMMLAB_UNROLL
    for (int w = 0; w < WPT; w++) {
        acc[w] = 0.0f;
    }

    const int numTiles = K / TSDK;
    for (int t = 0; t < numTiles; t++) {
        GEMMLAB_UNROLL
        for (int l = 0; l < LPT; l++) {
            const int id = l * TS * RTS + tid;
            const int mn = id % TS;                  // m for A, n for BT
            const int kk = id / TS;                  // k within the tile
            const int kg = TSDK * t + kk;
            Asub[kk][mn] = A[kg * M + offsetM + mn];
            Bsub[mn][kk] = B[kg * N + offsetN + mn];
        }
        __syncthreads();

        GEMMLAB_UNROLL
        for (int k = 0; k < TSDK; k++) {
            const float a = Asub[k][row];
            GEMMLAB_UNROLL
            for (int w = 0; w < WPT; w++) {
                acc[w] += a * Bsub[col + w * RTS][k];
            }
        }
        __syncthreads();
    }

    GEMMLAB_UNROLL
    for (int w = 0; w < WPT; w++) {
        C[(offsetN + col + w * RTS) * M + offsetM + row] = acc[w];
    }
}
