/*
 * coll: time one MPI collective under SimGrid SMPI, the peer check of
 * nexar-sim (see run.sh and README.md beside this file).
 *
 *   coll COLLECTIVE BYTES...
 *
 * COLLECTIVE is allreduce, allgather, alltoall, reduce_scatter, bcast,
 * reduce, gather, scatter or barrier; each BYTES is a message size as
 * nexar-sim counts it (allreduce, bcast, reduce: the buffer; allgather,
 * gather: the whole result, n/p per rank; alltoall: the send buffer, n/p
 * per peer; reduce_scatter, scatter: the whole input, n/p per rank), in
 * f32 elements summed, root 0. The algorithm is whatever smpirun's
 * --cfg=smpi/COLLECTIVE:NAME selects.
 *
 * For each size every rank starts the collective at one simulated instant,
 * agreed beforehand and later than every rank's clock, so nothing before
 * it (the barrier, the agreement) leaks into the time; the time is that of
 * the slowest rank, from the common start to its return. Rank 0 prints
 * one line per size: "COLLECTIVE,WORLD,BYTES,SECONDS" with SECONDS to 17
 * significant digits.
 *
 * Buffers come from SMPI_SHARED_MALLOC: their contents are not simulated
 * (only time is), so 16 ranks of 64 MiB cost no memory.
 */
#include <mpi.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* run starts COLLECTIVE on n bytes at the instant start and returns when
 * this rank is done. */
static int run(const char *coll, long n, int p, void *a, void *b, double start)
{
	int total = (int)(n / 4);  /* f32 elements of the whole buffer */
	int per = total / p;       /* elements per rank where it is split */
	sg_actor_sleep_until(start);
	if (!strcmp(coll, "allreduce"))
		return MPI_Allreduce(a, b, total, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	if (!strcmp(coll, "allgather"))
		return MPI_Allgather(a, per, MPI_FLOAT, b, per, MPI_FLOAT, MPI_COMM_WORLD);
	if (!strcmp(coll, "alltoall"))
		return MPI_Alltoall(a, per, MPI_FLOAT, b, per, MPI_FLOAT, MPI_COMM_WORLD);
	if (!strcmp(coll, "reduce_scatter")) {
		int *counts = malloc(sizeof(int) * p), r;
		for (int i = 0; i < p; i++)
			counts[i] = per;
		r = MPI_Reduce_scatter(a, b, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		free(counts);
		return r;
	}
	if (!strcmp(coll, "bcast"))
		return MPI_Bcast(a, total, MPI_FLOAT, 0, MPI_COMM_WORLD);
	if (!strcmp(coll, "reduce"))
		return MPI_Reduce(a, b, total, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!strcmp(coll, "gather"))
		return MPI_Gather(a, per, MPI_FLOAT, b, per, MPI_FLOAT, 0, MPI_COMM_WORLD);
	if (!strcmp(coll, "scatter"))
		return MPI_Scatter(a, per, MPI_FLOAT, b, per, MPI_FLOAT, 0, MPI_COMM_WORLD);
	if (!strcmp(coll, "barrier"))
		return MPI_Barrier(MPI_COMM_WORLD);
	return -1;
}

/* latest returns, on rank 0, the largest x of all ranks. It uses point to
 * point messages only, so that the algorithm smpirun selects for the
 * collective under test plays no part. */
static double latest(int rank, int p, double x)
{
	if (rank != 0) {
		MPI_Send(&x, 1, MPI_DOUBLE, 0, 77, MPI_COMM_WORLD);
		return x;
	}
	for (int r = 1; r < p; r++) {
		double y;
		MPI_Recv(&y, 1, MPI_DOUBLE, r, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (y > x)
			x = y;
	}
	return x;
}

/* agree returns an instant later than every rank's clock, the same on
 * every rank: rank 0 takes the latest clock, adds a second (simulated
 * time costs nothing) and sends it to all. */
static double agree(int rank, int p)
{
	double start = latest(rank, p, simgrid_get_clock()) + 1.0;
	if (rank == 0) {
		for (int r = 1; r < p; r++)
			MPI_Send(&start, 1, MPI_DOUBLE, r, 78, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&start, 1, MPI_DOUBLE, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	return start;
}

int main(int argc, char **argv)
{
	int rank, p;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: coll COLLECTIVE BYTES...\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long most = 0;
	for (int i = 2; i < argc; i++)
		if (atol(argv[i]) > most)
			most = atol(argv[i]);
	/* Room for the largest buffer on either side, plus slack for
	 * algorithms that read a little past a split. */
	size_t room = (size_t)most + 64;
	void *a = SMPI_SHARED_MALLOC(room), *b = SMPI_SHARED_MALLOC(room);
	for (int i = 2; i < argc; i++) {
		long n = atol(argv[i]);
		double start = agree(rank, p), took, slowest;
		if (run(argv[1], n, p, a, b, start) != MPI_SUCCESS) {
			fprintf(stderr, "coll: %s of %ld bytes failed\n", argv[1], n);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		took = simgrid_get_clock() - start;
		slowest = latest(rank, p, took);
		if (rank == 0) {
			printf("%s,%d,%ld,%.17g\n", argv[1], p, n, slowest);
			fflush(stdout);
		}
	}
	SMPI_SHARED_FREE(a);
	SMPI_SHARED_FREE(b);
	MPI_Finalize();
	return 0;
}
