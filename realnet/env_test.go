package realnet

import (
	"strings"
	"testing"
	"time"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLaunchFromEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		env  func(string) string
		want Launch
	}{
		{"torchrun rank 0", envOf("RANK", "0", "WORLD_SIZE", "4", "MASTER_ADDR", "node1", "MASTER_PORT", "29500"),
			Launch{Launcher: "torchrun", Rank: 0, World: 4, Seed: "node1:29500", HostSeed: true}},
		{"torchrun rank 3, IPv6 master", envOf("RANK", "3", "WORLD_SIZE", "4", "MASTER_ADDR", "fd00::1", "MASTER_PORT", "29500"),
			Launch{Launcher: "torchrun", Rank: 3, World: 4, Seed: "[fd00::1]:29500"}},
		{"slurm", envOf("SLURM_PROCID", "2", "SLURM_NTASKS", "8", "NEXAR_SEED", "10.0.0.1:7000", "NEXAR_CA", "/ca.pem", "NEXAR_CERT", "/c.pem", "NEXAR_KEY", "/k.pem"),
			Launch{Launcher: "slurm", Rank: 2, World: 8, Seed: "10.0.0.1:7000", CA: "/ca.pem", Cert: "/c.pem", Key: "/k.pem"}},
		{"mpirun rank 0, trusted", envOf("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2", "NEXAR_SEED", "h:1", "NEXAR_TRUSTED_NETWORK", "1"),
			Launch{Launcher: "mpirun", Rank: 0, World: 2, Seed: "h:1", HostSeed: true, TrustedNetwork: true}},
		{"nexar rank 1, spinning", envOf("NEXAR_WORLD", "2", "NEXAR_RANK", "1", "NEXAR_SEED", "h:1", "NEXAR_SPIN_READ", "50us"),
			Launch{Launcher: "nexar", Rank: 1, World: 2, Seed: "h:1", SpinRead: 50 * time.Microsecond}},
		{"nexar rank 1, over TCP", envOf("NEXAR_WORLD", "2", "NEXAR_RANK", "1", "NEXAR_SEED", "h:1", "NEXAR_LOCAL_SOCKETS", "0"),
			Launch{Launcher: "nexar", Rank: 1, World: 2, Seed: "h:1", NoLocalSockets: true}},
		{"nexar rank 1, local sockets", envOf("NEXAR_WORLD", "2", "NEXAR_RANK", "1", "NEXAR_SEED", "h:1", "NEXAR_LOCAL_SOCKETS", "1"),
			Launch{Launcher: "nexar", Rank: 1, World: 2, Seed: "h:1"}},
		{"nexar rank 1, no spin", envOf("NEXAR_WORLD", "2", "NEXAR_RANK", "1", "NEXAR_SEED", "h:1", "NEXAR_SPIN_READ", "0s"),
			Launch{Launcher: "nexar", Rank: 1, World: 2, Seed: "h:1"}},
		{"nexar, seed assigns", envOf("NEXAR_WORLD", "16", "NEXAR_SEED", "seed:9000"),
			Launch{Launcher: "nexar", Rank: -1, World: 16, Seed: "seed:9000"}},
		{"nexar rank 0 with an outside seed", envOf("NEXAR_WORLD", "2", "NEXAR_RANK", "0", "NEXAR_SEED", "seed:9000", "NEXAR_HOST_SEED", "0"),
			Launch{Launcher: "nexar", Rank: 0, World: 2, Seed: "seed:9000"}},
	} {
		got, err := LaunchFromEnv(c.env)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestLaunchFromEnvErrors(t *testing.T) {
	for _, c := range []struct {
		env  func(string) string
		want string
	}{
		{envOf(), "no launcher"},
		{envOf("RANK", "0", "WORLD_SIZE", "2"), "MASTER_ADDR"},
		{envOf("RANK", "x", "WORLD_SIZE", "2", "MASTER_ADDR", "a", "MASTER_PORT", "1"), "not an integer"},
		{envOf("RANK", "2", "WORLD_SIZE", "2", "MASTER_ADDR", "a", "MASTER_PORT", "1"), "outside a world"},
		{envOf("SLURM_PROCID", "0", "SLURM_NTASKS", "0", "NEXAR_SEED", "a:1"), "world size"},
		{envOf("SLURM_PROCID", "0", "SLURM_NTASKS", "2"), "NEXAR_SEED"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "nohost"), "seed address"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "a:99999"), "bad port"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "a:1", "NEXAR_HOST_SEED", "yes"), "NEXAR_HOST_SEED"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "a:1", "NEXAR_SPIN_READ", "50"), "NEXAR_SPIN_READ"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "a:1", "NEXAR_LOCAL_SOCKETS", "yes"), "NEXAR_LOCAL_SOCKETS"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "a:1", "NEXAR_SPIN_READ", "-1us"), "NEXAR_SPIN_READ"},
		{envOf("NEXAR_WORLD", "2", "NEXAR_SEED", "a:1", "NEXAR_SPIN_READ", "2s"), "NEXAR_SPIN_READ"},
	} {
		if _, err := LaunchFromEnv(c.env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error mentioning %q", err, c.want)
		}
	}
}

// FuzzLaunchFromEnv parses environments of "KEY=value" lines: it never
// panics, and what it accepts is consistent.
func FuzzLaunchFromEnv(f *testing.F) {
	f.Add("RANK=1\nWORLD_SIZE=4\nMASTER_ADDR=h\nMASTER_PORT=29500")
	f.Add("SLURM_PROCID=0\nSLURM_NTASKS=2\nNEXAR_SEED=[::1]:7")
	f.Add("NEXAR_WORLD=3\nNEXAR_SEED=x:1\nNEXAR_HOST_SEED=1")
	f.Add("NEXAR_WORLD=3\nNEXAR_RANK=2\nNEXAR_SEED=x:1\nNEXAR_CERT=/c/j-rank{rank}.pem\nNEXAR_KEY={rank}{rank}")
	f.Fuzz(func(t *testing.T, s string) {
		m := map[string]string{}
		for _, line := range strings.Split(s, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				m[k] = v
			}
		}
		la, err := LaunchFromEnv(func(k string) string { return m[k] })
		if err != nil {
			return
		}
		if la.World < 1 || la.World > maxWorld || la.Rank < -1 || la.Rank >= la.World || la.Seed == "" {
			t.Fatalf("accepted %+v", la)
		}
		if strings.Contains(la.Cert+"\x00"+la.Key, rankPlaceholder) || la.Rank < 0 && (la.Cert != m["NEXAR_CERT"] || la.Key != m["NEXAR_KEY"]) {
			t.Fatalf("credentials %q, %q from %q, %q at rank %d", la.Cert, la.Key, m["NEXAR_CERT"], m["NEXAR_KEY"], la.Rank)
		}
	})
}

// TestLaunchFromMPI: MPICH's and Intel MPI's PMI_RANK and PMI_SIZE, and
// MVAPICH2's, are read; an MPI launcher's variables win over the
// SLURM_PROCID its srun-started daemons leave to the ranks.
func TestLaunchFromMPI(t *testing.T) {
	for _, c := range []struct {
		name string
		env  func(string) string
		want Launch
	}{
		{"mpiexec", envOf("PMI_RANK", "3", "PMI_SIZE", "4", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "mpiexec", Rank: 3, World: 4, Seed: "h:1"}},
		{"mpiexec inside slurm", envOf("PMI_RANK", "0", "PMI_SIZE", "8", "SLURM_PROCID", "1", "SLURM_NTASKS", "2", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "mpiexec", Rank: 0, World: 8, Seed: "h:1", HostSeed: true}},
		{"open mpi inside slurm", envOf("OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "8", "SLURM_PROCID", "1", "SLURM_NTASKS", "2", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "mpirun", Rank: 5, World: 8, Seed: "h:1"}},
		{"mvapich2", envOf("MV2_COMM_WORLD_RANK", "1", "MV2_COMM_WORLD_SIZE", "2", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "mpirun_rsh", Rank: 1, World: 2, Seed: "h:1"}},
	} {
		got, err := LaunchFromEnv(c.env)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, err := LaunchFromEnv(envOf("PMI_RANK", "4", "PMI_SIZE", "4", "NEXAR_SEED", "h:1")); err == nil || !strings.Contains(err.Error(), "PMI_RANK=4") {
		t.Errorf("a rank outside the world: %v", err)
	}
	if _, err := LaunchFromEnv(envOf("PMI_RANK", "0", "PMI_SIZE", "4")); err == nil || !strings.Contains(err.Error(), "NEXAR_SEED") {
		t.Errorf("no seed: %v", err)
	}
}

// TestStartNamesMissingCredentials: a worker without credentials is told
// which variable to set, not "open : no such file or directory".
func TestStartNamesMissingCredentials(t *testing.T) {
	la := Launch{Launcher: "nexar", Rank: 0, World: 1, Seed: "127.0.0.1:0", HostSeed: true, Cert: "/c.pem", Key: "/k.pem"}
	_, err := Start(t.Context(), la, Config{})
	if err == nil || !strings.Contains(err.Error(), "NEXAR_CA is not set") {
		t.Errorf("Start without NEXAR_CA: %v", err)
	}
}
