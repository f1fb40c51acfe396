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

// TestLaunchFromEnvPrecedence: environments of real launchers where
// another convention's variables are set too (inherited from a batch
// script, an salloc shell, the daemons an MPI launcher starts with srun,
// or exported by the user), and the values they must give.
func TestLaunchFromEnvPrecedence(t *testing.T) {
	for _, c := range []struct {
		name string
		env  func(string) string
		want Launch
	}{
		// srun -E keeps the job's SLURM_NTASKS; the step's size is
		// SLURM_STEP_NUM_TASKS (Slurm's env_array_for_step).
		{"srun --preserve-env -n4 in a job of 16", envOf("SLURM_PROCID", "3", "SLURM_LOCALID", "3", "SLURM_NTASKS", "16", "SLURM_NPROCS", "16",
			"SLURM_STEP_NUM_TASKS", "4", "NEXAR_SEED", "node01:29501"),
			Launch{Launcher: "slurm", Rank: 3, World: 4, Seed: "node01:29501"}},
		// Explicit NEXAR_WORLD and NEXAR_RANK win over what a batch
		// step or an salloc shell leaves.
		{"nexar in an sbatch batch step", envOf("SLURM_PROCID", "0", "SLURM_LOCALID", "0", "SLURM_NTASKS", "4",
			"NEXAR_WORLD", "2", "NEXAR_RANK", "1", "NEXAR_SEED", "127.0.0.1:29501"),
			Launch{Launcher: "nexar", Rank: 1, World: 2, Seed: "127.0.0.1:29501"}},
		{"nexar in an salloc shell", envOf("SLURM_NTASKS", "4", "SLURM_JOB_NODELIST", "node[01-04]",
			"NEXAR_WORLD", "2", "NEXAR_RANK", "1", "NEXAR_SEED", "127.0.0.1:29501"),
			Launch{Launcher: "nexar", Rank: 1, World: 2, Seed: "127.0.0.1:29501"}},
		{"nexar over torchrun's", envOf("RANK", "3", "WORLD_SIZE", "4", "MASTER_ADDR", "node1", "MASTER_PORT", "29500",
			"NEXAR_WORLD", "2", "NEXAR_RANK", "0", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "nexar", Rank: 0, World: 2, Seed: "h:1", HostSeed: true}},
		// WORLD_SIZE without RANK is a script's export, not torchrun's.
		{"srun with an exported WORLD_SIZE", envOf("WORLD_SIZE", "8", "MASTER_ADDR", "node01", "MASTER_PORT", "29500",
			"SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1", "NEXAR_SEED", "node01:29501"),
			Launch{Launcher: "slurm", Rank: 5, World: 8, Seed: "node01:29501"}},
		{"torchrun, bracketed IPv6 master", envOf("RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR", "[fd00::1]", "MASTER_PORT", "29500"),
			Launch{Launcher: "torchrun", Rank: 1, World: 2, Seed: "[fd00::1]:29500"}},
		{"PyTorchJob nprocPerNode=4 under torchrun", envOf("RANK", "5", "LOCAL_RANK", "1", "WORLD_SIZE", "8", "TORCHELASTIC_RUN_ID", "job",
			"MASTER_ADDR", "m-0", "MASTER_PORT", "23456", "PET_NPROC_PER_NODE", "4", "PET_NODE_RANK", "1"),
			Launch{Launcher: "torchrun", Rank: 5, World: 8, Seed: "m-0:23456"}},
		{"PyTorchJob nprocPerNode=1", envOf("RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR", "m-0", "MASTER_PORT", "23456", "PET_NPROC_PER_NODE", "1"),
			Launch{Launcher: "torchrun", Rank: 1, World: 2, Seed: "m-0:23456"}},
		// srun's PMI plugins set PMI_RANK and PMI_SIZE beside Slurm's.
		{"srun --mpi=pmi2", envOf("PMI_RANK", "5", "PMI_SIZE", "8", "PMI_FD", "12", "PMI_JOBID", "77.0", "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "srun (PMI)", Rank: 5, World: 8, Seed: "h:1"}},
		{"srun --mpi=cray_shasta", envOf("PMI_RANK", "5", "PMI_SIZE", "8", "PMI_LOCAL_RANK", "1", "SLURM_PROCID", "5", "SLURM_NTASKS", "8",
			"SLURM_STEP_NUM_TASKS", "8", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "srun (PMI)", Rank: 5, World: 8, Seed: "h:1"}},
		// mpirun_rsh sets PMI_ID beside its own variables.
		{"MVAPICH2 with PMI_ID", envOf("PMI_ID", "3", "MV2_COMM_WORLD_RANK", "3", "MV2_COMM_WORLD_SIZE", "4", "MV2_COMM_WORLD_LOCAL_RANK", "1", "NEXAR_SEED", "h:1"),
			Launch{Launcher: "mpirun_rsh", Rank: 3, World: 4, Seed: "h:1"}},
	} {
		got, err := LaunchFromEnv(c.env)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// TestLaunchFromEnvRefuses: environments that give no consistent place in
// a world are refused with an error that says what to do, rather than
// read as another launcher's.
func TestLaunchFromEnvRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		env  func(string) string
		want []string // in the error
	}{
		{"Hydra -pmi-port inside Slurm", envOf("PMI_PORT", "node01:41234", "PMI_ID", "6", "MPI_LOCALRANKID", "2",
			"SLURM_PROCID", "1", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0", "NEXAR_SEED", "h:1"),
			[]string{"PMI_PORT mode", "no world size", "NEXAR_WORLD and NEXAR_RANK", "-pmi-fd"}},
		{"Hydra -pmi-port", envOf("PMI_PORT", "node01:41234", "PMI_ID", "6", "NEXAR_SEED", "h:1"),
			[]string{`PMI_ID="6"`, "PMI_PORT mode"}},
		{"PyTorchJob nprocPerNode=4 without torchrun", envOf("RANK", "1", "WORLD_SIZE", "8", "MASTER_ADDR", "m-0", "MASTER_PORT", "23456",
			"PET_NODE_RANK", "1", "PET_NNODES", "2", "PET_NPROC_PER_NODE", "4"),
			[]string{"PET_NPROC_PER_NODE=4", "launch the worker with torchrun"}},
		{"salloc shell", envOf("SLURM_NTASKS", "4", "NEXAR_SEED", "h:1"), []string{"SLURM_NTASKS=\"4\" without SLURM_PROCID", "srun"}},
		{"RANK alone", envOf("RANK", "1", "MASTER_ADDR", "a", "MASTER_PORT", "1"), []string{`WORLD_SIZE=""`, "torchrun sets both"}},
		{"srun with an exported WORLD_SIZE, no seed", envOf("WORLD_SIZE", "8", "MASTER_ADDR", "node01", "MASTER_PORT", "29500",
			"SLURM_PROCID", "5", "SLURM_NTASKS", "8"), []string{"slurm environment without NEXAR_SEED"}},
		{"srun step size outside", envOf("SLURM_PROCID", "5", "SLURM_NTASKS", "16", "SLURM_STEP_NUM_TASKS", "4", "NEXAR_SEED", "h:1"),
			[]string{"SLURM_PROCID=5 outside a world of 4"}},
		{"srun step size bad", envOf("SLURM_PROCID", "0", "SLURM_NTASKS", "16", "SLURM_STEP_NUM_TASKS", "x", "NEXAR_SEED", "h:1"),
			[]string{`SLURM_STEP_NUM_TASKS="x" is not an integer`}},
	} {
		_, err := LaunchFromEnv(c.env)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want an error with %q", c.name, err, w)
			}
		}
	}
}

// TestLocalRankFromEnv: the local rank is the launcher's, as
// LaunchFromEnv picks it, not one another launcher leaves (the srun that
// started an MPI launcher's daemons).
func TestLocalRankFromEnv(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   func(string) string
		local int
		from  string
	}{
		{"none", envOf("RANK", "0"), -1, ""},
		{"torchrun inside srun", envOf("RANK", "9", "WORLD_SIZE", "16", "LOCAL_RANK", "3", "SLURM_LOCALID", "0", "SLURM_PROCID", "1"), 3, "LOCAL_RANK"},
		{"srun", envOf("SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "5"), 5, "SLURM_LOCALID"},
		{"Open MPI mpirun in sbatch", envOf("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "8", "OMPI_COMM_WORLD_LOCAL_RANK", "3",
			"SLURM_LOCALID", "0", "SLURM_PROCID", "0", "SLURM_NTASKS", "2"), 3, "OMPI_COMM_WORLD_LOCAL_RANK"},
		{"Open MPI over an exported LOCAL_RANK", envOf("OMPI_COMM_WORLD_RANK", "5", "OMPI_COMM_WORLD_SIZE", "8", "OMPI_COMM_WORLD_LOCAL_RANK", "1",
			"LOCAL_RANK", "0"), 1, "OMPI_COMM_WORLD_LOCAL_RANK"},
		{"Open MPI's local rank in a Slurm task", envOf("OMPI_COMM_WORLD_LOCAL_RANK", "3", "SLURM_LOCALID", "0", "SLURM_PROCID", "0", "SLURM_NTASKS", "2"),
			3, "OMPI_COMM_WORLD_LOCAL_RANK"},
		{"Hydra", envOf("PMI_RANK", "6", "PMI_SIZE", "8", "MPI_LOCALRANKID", "2", "MPI_LOCALNRANKS", "4"), 2, "MPI_LOCALRANKID"},
		{"Hydra inside Slurm", envOf("PMI_RANK", "6", "PMI_SIZE", "8", "MPI_LOCALRANKID", "2", "SLURM_PROCID", "1", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0"),
			2, "MPI_LOCALRANKID"},
		{"Hydra -pmi-port inside Slurm", envOf("PMI_PORT", "n:1", "PMI_ID", "6", "MPI_LOCALRANKID", "2", "SLURM_PROCID", "1", "SLURM_LOCALID", "0"),
			2, "MPI_LOCALRANKID"},
		{"MVAPICH2", envOf("MV2_COMM_WORLD_RANK", "3", "MV2_COMM_WORLD_SIZE", "4", "MV2_COMM_WORLD_LOCAL_RANK", "1"), 1, "MV2_COMM_WORLD_LOCAL_RANK"},
		{"srun --mpi=cray_shasta", envOf("PMI_RANK", "5", "PMI_SIZE", "8", "PMI_LOCAL_RANK", "1", "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1"),
			1, "PMI_LOCAL_RANK"},
		{"srun --mpi=pmi2", envOf("PMI_RANK", "5", "PMI_SIZE", "8", "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1"), 1, "SLURM_LOCALID"},
		{"nexar-live run", envOf("NEXAR_WORLD", "4", "NEXAR_RANK", "2", "LOCAL_RANK", "2"), 2, "LOCAL_RANK"},
		{"nexar under srun", envOf("NEXAR_WORLD", "4", "NEXAR_RANK", "2", "SLURM_PROCID", "0", "SLURM_LOCALID", "2"), 2, "SLURM_LOCALID"},
	} {
		local, from, err := LocalRankFromEnv(c.env)
		if err != nil || local != c.local || from != c.from {
			t.Errorf("%s: %d from %q, %v; want %d from %q", c.name, local, from, err, c.local, c.from)
		}
	}
	if _, _, err := LocalRankFromEnv(envOf("PMI_RANK", "0", "PMI_SIZE", "2", "MPI_LOCALRANKID", "-1")); err == nil || !strings.Contains(err.Error(), `MPI_LOCALRANKID="-1"`) {
		t.Errorf("a negative local rank: %v", err)
	}
}
