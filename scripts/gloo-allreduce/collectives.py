"""Collectives of PyTorch's Gloo backend, timed and checked, printed in
nccl-tests' layout (one table per collective), for scripts/gloo-allreduce.

    python3 collectives.py --np N --sizes 8,1048576 [--warmup W] [--iters N]
                           [--collectives allreduce,allgather,reduce_scatter,broadcast]

N processes (torch.multiprocessing) join one torch.distributed group with
backend "gloo" over loopback (env init on 127.0.0.1, a free port). Each
size runs W untimed iterations, then N timed ones back to back, as
nccl-tests does: the time is the slowest rank's loop time over N. The
timed loop works in place on f32 buffers (torch's collectives are in
place); the result of one further call on fresh data is then checked
exactly against the expected sums, and #wrong counts the elements that
differ. After each row, a comment line gives the CPU (user and system,
getrusage, every thread of a rank) of all ranks together per timed
iteration, with their minor page faults and context switches: on a
machine whose cores the ranks share, the CPU varies less with other
work than the time does ('nexar-live run --profile DIR' writes nexar-live's
to DIR/rank-N.cpu). A collective this torch's Gloo lacks (reduce_scatter before
torch 2) is skipped with a comment line. Sizes are nccl-tests': the whole buffer for allreduce and
broadcast, all blocks together for allgather and reduce_scatter (sizes
not a multiple of 4 x N bytes are left out there, with a comment).
"""

import argparse
import os
import resource
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

# nccl-tests' binary names, which calibrate reads the collective from.
PERF = {"allreduce": "all_reduce_perf", "allgather": "all_gather_perf",
        "reduce_scatter": "reduce_scatter_perf", "broadcast": "broadcast_perf"}


def bus_factor(coll, p):
    if coll == "allreduce":
        return 2.0 * (p - 1) / p
    if coll in ("allgather", "reduce_scatter"):
        return (p - 1) / p
    return 1.0


def pattern(n, rank):
    # i % 7 + rank, as scripts/ompi-allreduce/allreduce.c fills its input.
    return (torch.arange(n, dtype=torch.int64) % 7 + rank).to(torch.float32)


class Op:
    """One collective on buffers of `size` bytes: run() is one call,
    check() the number of wrong elements of one call on fresh data."""

    def __init__(self, coll, size, rank, p):
        self.coll, self.rank, self.p = coll, rank, p
        n = size // 4
        if coll in ("allgather", "reduce_scatter"):
            self.block = n // p
            self.count = self.block * p
        else:
            self.count = n
        if coll == "allgather":
            self.send = pattern(self.block, rank)
            self.recv = [torch.empty(self.block) for _ in range(p)]
        elif coll == "reduce_scatter":
            self.send = [pattern(self.block, rank) for _ in range(p)]
            self.recv = torch.empty(self.block)
        else:
            self.buf = pattern(self.count, rank)

    def run(self):
        if self.coll == "allreduce":
            dist.all_reduce(self.buf)
        elif self.coll == "broadcast":
            dist.broadcast(self.buf, src=0)
        elif self.coll == "allgather":
            dist.all_gather(self.recv, self.send)
        else:
            dist.reduce_scatter(self.recv, self.send)

    def check(self):
        p, rank = self.p, self.rank
        if self.coll == "allreduce":
            self.buf = pattern(self.count, rank)
            self.run()
            want = (torch.arange(self.count) % 7 * p + p * (p - 1) // 2).to(torch.float32)
            return int((self.buf != want).sum())
        if self.coll == "broadcast":
            self.buf = pattern(self.count, rank)
            self.run()
            return int((self.buf != pattern(self.count, 0)).sum())
        if self.coll == "allgather":
            self.run()
            return sum(int((r != pattern(self.block, q)).sum()) for q, r in enumerate(self.recv))
        self.send = [pattern(self.block, rank) for _ in range(p)]
        self.run()
        want = (torch.arange(self.block) % 7 * p + p * (p - 1) // 2).to(torch.float32)
        return int((self.recv != want).sum())


def fmt_time(us):
    if us < 1e4:
        return "%7.2f" % us
    if us < 1e6:
        return "%7.1f" % us
    return "%7.0f" % us


def header(coll, a, p, pids):
    print("# gloo-allreduce (nexar-go scripts/gloo-allreduce): torch %s, backend gloo" % torch.__version__)
    print("# Collective test starting: %s" % PERF[coll])
    print("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 1(factor) warmup iters: %d iters: %d validation: 1"
          % (min(a.sizes), max(a.sizes), a.warmup, a.iters))
    print("#\n# Using devices")
    for r in range(p):
        print("#  Rank %2d Group  0 Pid %6d on %10s device -1 [cpu] gloo" % (r, pids[r], socket.gethostname()))
    print("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong")
    print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       ")


def supported(coll, rank, p):
    """Whether this torch's Gloo has coll: one call on 4 B a rank."""
    try:
        Op(coll, 4 * p, rank, p).run()
        return ""
    except RuntimeError as e:
        return str(e).splitlines()[0]


def usage(ru0, ru1, n):
    """What getrusage counted between ru0 and ru1, per iteration of n:
    user and system seconds, minor faults, voluntary and involuntary
    context switches, as a tensor to sum over the ranks."""
    return torch.tensor([(ru1.ru_utime - ru0.ru_utime) / n, (ru1.ru_stime - ru0.ru_stime) / n,
                         (ru1.ru_minflt - ru0.ru_minflt) / n, (ru1.ru_nvcsw - ru0.ru_nvcsw) / n,
                         (ru1.ru_nivcsw - ru0.ru_nivcsw) / n], dtype=torch.float64)


def one_collective(coll, a, rank, p, pids):
    why = supported(coll, rank, p)
    if why:
        if rank == 0:
            print("# %s skipped: %s" % (coll, why))
            sys.stdout.flush()
        return 0
    if rank == 0:
        header(coll, a, p, pids)
    wrong_total, busbw_sum, rows = 0, 0.0, 0
    for size in a.sizes:
        if coll in ("allgather", "reduce_scatter") and (size % (4 * p) or size == 0):
            if rank == 0:
                print("# %d B left out: not a multiple of %d B (4 B x %d ranks)" % (size, 4 * p, p))
            continue
        op = Op(coll, size, rank, p)
        for _ in range(a.warmup):
            op.run()
        dist.barrier()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        for _ in range(a.iters):
            op.run()
        t = torch.tensor([(time.perf_counter() - t0) / a.iters], dtype=torch.float64)
        cpu = usage(ru0, resource.getrusage(resource.RUSAGE_SELF), a.iters)
        dist.all_reduce(cpu)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        wrong = torch.tensor([op.check()], dtype=torch.int64)
        dist.all_reduce(wrong)
        if rank == 0:
            tmax, w = float(t[0]), int(wrong[0])
            algbw = op.count * 4 / tmax / 1e9
            busbw = algbw * bus_factor(coll, p)
            print("%12d  %12d  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6d" % (
                op.count * 4, op.count, "float", "sum" if coll != "broadcast" else "none",
                -1 if coll != "broadcast" else 0, fmt_time(tmax * 1e6), algbw, busbw, w))
            sys.stdout.flush()
            print("# cpu per iteration, all ranks: cpu_ms %.3f user_ms %.3f sys_ms %.3f minflt %.1f nvcsw %.1f nivcsw %.1f"
                  % ((cpu[0] + cpu[1]) * 1e3, cpu[0] * 1e3, cpu[1] * 1e3, cpu[2], cpu[3], cpu[4]))
            sys.stdout.flush()
            wrong_total += w
            busbw_sum += busbw
            rows += 1
    if rank == 0:
        print("# Out of bounds values : %d %s\n# Avg bus bandwidth    : %g\n#"
              % (wrong_total, "FAILED" if wrong_total else "OK", busbw_sum / max(rows, 1)))
        sys.stdout.flush()
    return wrong_total


def rank_main(rank, a, port, status):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)  # one core a rank, as an MPI process has
    dist.init_process_group("gloo", rank=rank, world_size=a.np)
    pids = [None] * a.np
    dist.all_gather_object(pids, os.getpid())
    wrong = 0
    for coll in a.collectives:
        wrong += one_collective(coll, a, rank, a.np, pids)
    dist.barrier()
    dist.destroy_process_group()
    if wrong:
        status.value = 1


def sizes(s):
    out = []
    for f in s.split(","):
        f = f.strip()
        mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(f[-1:].lower(), 1)
        out.append(int(f[:-1] if mult > 1 else f) * mult)
    return out


def main():
    ap = argparse.ArgumentParser(description="Gloo collectives in nccl-tests' table")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--sizes", type=sizes, default=sizes("8,64,512,4K,32K,256K,2M,16M,64M"))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--collectives", default="allreduce")
    a = ap.parse_args()
    a.collectives = [c for c in a.collectives.split(",") if c]
    for c in a.collectives:
        if c not in PERF:
            print("collectives.py: unknown collective %r (want one of %s)" % (c, ",".join(PERF)), file=sys.stderr)
            sys.exit(2)
    if a.np < 1 or a.iters < 1 or a.warmup < 0:
        print("collectives.py: want --np >= 1, --iters >= 1, --warmup >= 0", file=sys.stderr)
        sys.exit(2)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    status = mp.Value("i", 0)
    mp.spawn(rank_main, args=(a, port, status), nprocs=a.np, join=True)
    sys.exit(status.value)


if __name__ == "__main__":
    main()
