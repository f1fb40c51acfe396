/*
 * MPI_Allreduce of f32 sums, timed and checked, printed in nccl-tests'
 * layout so that nexar-live reads it as it reads all_reduce_perf's
 * output (nexar-live peer, nexar-live calibrate). The peer of nexar-go's
 * loopback measurements: see run.sh.
 *
 *   mpirun -np 4 ./ompi-allreduce -b 8 -e 64M -f 8 -w 5 -n 20
 *
 * Sizes go from -b to -e bytes, multiplying by -f (suffixes K, M, G are
 * powers of 1024); -l 8,1024,65536 lists them instead. Each size runs -w
 * untimed iterations, then -n timed ones back to back, as nccl-tests
 * does: the time is the slowest rank's loop time over -n. The result of
 * the last iteration is checked element by element: every input is a
 * small integer, so the f32 sum is exact in any order.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long parse_size(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    switch (*end) {
    case 'K': case 'k': v <<= 10; break;
    case 'M': case 'm': v <<= 20; break;
    case 'G': case 'g': v <<= 30; break;
    }
    return v;
}

int main(int argc, char **argv) {
    long minb = 8, maxb = 64L << 20, factor = 8;
    int warmup = 5, iters = 20;
    long list[256];
    int nlist = 0;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b")) minb = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-e")) maxb = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-f")) factor = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-l")) {
            for (char *t = strtok(argv[i + 1], ","); t && nlist < 256; t = strtok(NULL, ","))
                list[nlist++] = parse_size(t);
        } else {
            if (rank == 0) fprintf(stderr, "unknown flag %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nlist == 0)
        for (long b = minb; b <= maxb && nlist < 256; b *= factor) list[nlist++] = b;

    /* The header nccl-tests prints: settings, one line per rank. */
    char host[64] = {0};
    gethostname(host, sizeof host - 1);
    int pid = (int)getpid();
    int *pids = rank == 0 ? malloc(sizeof(int) * size) : NULL;
    char *hosts = rank == 0 ? malloc(64 * (size_t)size) : NULL;
    MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(host, 64, MPI_CHAR, hosts, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl) *nl = 0;
        printf("# ompi-allreduce (nexar-go scripts/ompi-allreduce): MPI_Allreduce, %s\n", version);
        printf("# Collective test starting: all_reduce_perf\n");
        printf("# nThread 1 nGpus 1 minBytes %ld maxBytes %ld step: %ld(factor) warmup iters: %d iters: %d validation: 1\n",
               list[0], list[nlist - 1], factor, warmup, iters);
        printf("#\n# Using devices\n");
        for (int r = 0; r < size; r++)
            printf("#  Rank %2d Group  0 Pid %6d on %10s device -1 [cpu] MPI\n", r, pids[r], hosts + 64 * r);
        printf("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong\n");
        printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       \n");
        fflush(stdout);
    }

    long wrong_total = 0;
    double busbw_sum = 0;
    for (int s = 0; s < nlist; s++) {
        long bytes = list[s], count = bytes / 4;
        float *in = malloc(sizeof(float) * (count ? count : 1));
        float *out = malloc(sizeof(float) * (count ? count : 1));
        for (long i = 0; i < count; i++) in[i] = (float)(i % 7 + rank);
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / iters, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        long wrong = 0, wsum;
        for (long i = 0; i < count; i++)
            if (out[i] != (float)(size * (i % 7) + size * (size - 1) / 2)) wrong++;
        MPI_Reduce(&wrong, &wsum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double us = tmax * 1e6, algbw = bytes / tmax / 1e9, busbw = algbw * 2.0 * (size - 1) / size;
            char ts[32];
            if (us < 1e4) snprintf(ts, sizeof ts, "%7.2f", us);
            else if (us < 1e6) snprintf(ts, sizeof ts, "%7.1f", us);
            else snprintf(ts, sizeof ts, "%7.0f", us);
            printf("%12ld  %12ld  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6ld\n", bytes, count, "float", "sum", -1, ts, algbw, busbw, wsum);
            fflush(stdout);
            wrong_total += wsum;
            busbw_sum += busbw;
        }
        free(in);
        free(out);
    }
    if (rank == 0) {
        printf("# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %g\n#\n", wrong_total, wrong_total ? "FAILED" : "OK", busbw_sum / nlist);
    }
    MPI_Finalize();
    return wrong_total ? 1 : 0;
}
