// myGEMM5 -- transposed B, rectangular tiles, padded local memory, OpenCL twin.
//
// Idea: kernel 3 (WPT elements of C per work-item along N, strided by
// RTS = TS/WPT) with two changes. (1) B arrives pre-transposed (BT, N x K),
// so the B tile can be read from global memory along N, coalesced, just
// like A is read along M. (2) The tiles are TS x TSDK in K, decoupling the
// K depth of a tile from TS: each work-item copies LPT = TSDK*WPT/TS
// elements of A and of BT per tile. The B tile is stored as Bsub[n][k]
// with rows padded to TSDK+2 floats so that the column-wise stores do not
// all hit the same local-memory bank.
//
// Parameters: TS (tile size along M and N), WPT (work per thread along N),
//             TSDK (tile depth along K).
// Derived: RTS = TS/WPT (work-group size along N), LPT = TSDK*WPT/TS
//          (elements of A and of BT each work-item loads per tile).
// Launch: local (TS, TS/WPT), global (M, N/WPT).
// Assumes: column-major A (MxK) and C (MxN); B TRANSPOSED: the B argument
//          holds BT (N x K column-major, B(k,n) = BT[k*N + n]); M and N
//          multiples of TS, K a multiple of TSDK; TS a multiple of WPT;
//          TSDK*WPT a multiple of TS.
// Local memory: TSDK*TS + TS*(TSDK+2) floats.
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

__kernel GEMMLAB_BOUNDS(TS, RTS)
void myGEMM5(const int M, const int N, const int K,
             const __global float* restrict A,
             const __global float* restrict B,
             __global float* C) {
    const int row = (int)get_local_id(0);            // 0..TS-1
    const int col = (int)get_local_id(1);            // 0..RTS-1
    const int offsetM = TS * (int)get_group_id(0);
    const int offsetN = TS * (int)get_group_id(1);
    const int tid = col * TS + row;                  // linear id in the group

    __local float Asub[TSDK][TS];                    // Asub[k][m]
    __local float Bsub[TS][TSDK + 2];                // Bsub[n][k], padded

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
        barrier(CLK_LOCAL_MEM_FENCE);

        GEMMLAB_UNROLL
        for (int k = 0; k < TSDK; k++) {
            const float a = Asub[k][row];
            GEMMLAB_UNROLL
            for (int w = 0; w < WPT; w++) {
                acc[w] += a * Bsub[col + w * RTS][k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    GEMMLAB_UNROLL
    for (int w = 0; w < WPT; w++) {
        C[(offsetN + col + w * RTS) * M + offsetM + row] = acc[w];
    }
}
