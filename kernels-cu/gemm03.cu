// myGEMM3 -- more work per thread, CUDA twin.
//
// Idea: kernel 2 with each thread computing WPT elements of C in the same
// row, at columns col, col+RTS, col+2*RTS, ... (RTS = TS/WPT). The block
// is TS x RTS, the C tile still TS x TS. A value read from Asub is reused
// WPT times from a register, and each thread copies WPT elements of A and
// of B per tile.
//
// Parameters: TS (tile size), WPT (work per thread along N).
// Derived: RTS = TS/WPT (block size along N).
// Launch: block (TS, TS/WPT), grid (M/TS, N/TS), i.e. NDRange (M, N/WPT).
// Assumes: column-major A (MxK), B (KxN, not transposed), C (MxN);
//          M, N, K multiples of TS; TS a multiple of WPT.
// Shared memory: 2*TS*TS floats.
// Twin differences: none beyond syntax.

#ifndef TS
#define TS 32
#endif
#ifndef WPT
#define WPT 8
#endif

#define RTS (TS / WPT)

#if (TS % WPT) != 0
#error "myGEMM3: TS must be a multiple of WPT"
#endif

extern "C" __global__ GEMMLAB_BOUNDS(TS, RTS)
void myGEMM3(const int M, const int N, const int K,
             const float* __restrict__ A,
             const float* __restrict__ B,
             float* C) {
    const int row = (int)threadIdx.x;                // 0..TS-1
    const int col = (int)threadIdx.y;                // 0..RTS-1
    const int gRow = TS * (int)blockIdx.x + row;
    const int gCol = TS * (int)blockIdx.y + col;

    __shared__ float Asub[TS][TS];                   // Asub[k][m]
    __shared__ float Bsub[TS][TS];                   // Bsub[n][k]

    float acc[WPT];
    GEMMLAB_UNROLL
    for (int w = 0; w < WPT; w++) {
        acc[w] = 0.0f;
    }

    const int numTiles = K / TS;
    for (int t = 0; t < numTiles; t++) {
        GEMMLAB_UNROLL
        for (int w = 0; w < WPT; w++) {
            const int kA = TS * t + col + w * RTS;
            const int kB = TS * t + row;
            Asub[col + w * RTS][row] = A[kA * M + gRow];
            Bsub[col + w * RTS][row] = B[(gCol + w * RTS) * K + kB];
        }
        __syncthreads();

        GEMMLAB_UNROLL
        for (int k = 0; k < TS; k++) {
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
        C[(gCol + w * RTS) * M + gRow] = acc[w];
    }
}
