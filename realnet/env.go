package realnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Launch says where a process stands in a job and how it finds the
// others. Clusters are started by the scheduler the site already has;
// LaunchFromEnv reads what it leaves in the environment.
type Launch struct {
	// Launcher names the convention the values came from: "nexar",
	// "torchrun", "mpirun", "mpiexec", "mpirun_rsh", "srun (PMI)" (srun's
	// PMI plugin's PMI_RANK and PMI_SIZE) or "slurm".
	Launcher string
	// Rank is this process's rank, or -1 for one the seed assigns.
	Rank  int
	World int
	// Seed is the rendezvous address, "host:port".
	Seed string
	// HostSeed says this process serves the rendezvous, on Seed's port:
	// rank 0 when ranks are known (torchrun's MASTER_ADDR:MASTER_PORT is
	// rank 0's address).
	HostSeed bool
	// CA, Cert and Key are the paths of the cluster CA certificate and of
	// this process's certificate and key (NEXAR_CA, NEXAR_CERT, NEXAR_KEY).
	CA, Cert, Key string
	// TrustedNetwork allows plaintext bulk TCP (NEXAR_TRUSTED_NETWORK=1).
	TrustedNetwork bool
	// NoLocalSockets connects ranks on one host over TCP
	// (NEXAR_LOCAL_SOCKETS=0; Config.NoLocalSockets).
	NoLocalSockets bool
	// SpinRead is Config.SpinRead (NEXAR_SPIN_READ, a duration such as
	// "50us"; unset or "0": off).
	SpinRead time.Duration
}

// LaunchFromEnv reads a Launch from the environment through getenv
// (os.Getenv in a real process). The first convention whose variables are
// set decides, in this order:
//
//	nexar:      NEXAR_WORLD, NEXAR_SEED, and NEXAR_RANK if the rank is known
//	torchrun:   RANK and WORLD_SIZE (both), MASTER_ADDR, MASTER_PORT
//	mpirun:     OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (Open MPI), and NEXAR_SEED
//	mpiexec:    PMI_RANK, PMI_SIZE (MPICH, Intel MPI, Cray PMI), and NEXAR_SEED
//	mpirun_rsh: MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_SIZE (MVAPICH2), and NEXAR_SEED
//	slurm:      SLURM_PROCID, SLURM_STEP_NUM_TASKS (else SLURM_NTASKS), and NEXAR_SEED
//
// Variables set explicitly (NEXAR_WORLD) win over a launcher's, which a
// process may inherit from a batch script or salloc shell. An MPI
// launcher's variables win over Slurm's: mpirun and mpiexec inside an
// allocation start their daemons with srun, and the ranks inherit the
// daemons' SLURM_PROCID and SLURM_NTASKS. Slurm counts only where
// SLURM_PROCID is set (salloc leaves SLURM_NTASKS without it), and the
// world is the step's SLURM_STEP_NUM_TASKS: srun --preserve-env keeps the
// job's SLURM_NTASKS. PMI_RANK and PMI_SIZE that agree with SLURM_PROCID
// and the step's size are srun's PMI plugin's (--mpi=pmi2, cray_shasta):
// Launcher is then "srun (PMI)". LaunchFromEnv refuses Hydra's PMI_PORT
// mode (PMI_ID or PMI_PORT without PMI_RANK and PMI_SIZE), which gives no
// world size, and a Kubeflow PyTorchJob's RANK and WORLD_SIZE for
// PET_NPROC_PER_NODE > 1 in a process torchrun did not start (no
// LOCAL_RANK or TORCHELASTIC_RUN_ID): there RANK is the pod's.
//
// NEXAR_SEED ("host:port") overrides MASTER_ADDR:MASTER_PORT (a MASTER_ADDR
// in brackets, "[fd00::1]", is taken without them). Rank 0 hosts
// the seed when ranks are known; NEXAR_HOST_SEED=1 or 0 overrides that
// (a nexar job without ranks needs a seed run by ServeSeed). NEXAR_CA,
// NEXAR_CERT and NEXAR_KEY name the credentials ({rank} in the last two
// stands for the rank, for certificates issued per rank), and
// NEXAR_TRUSTED_NETWORK=1 allows plaintext bulk transfers;
// NEXAR_SPIN_READ sets Config.SpinRead; NEXAR_LOCAL_SOCKETS=0 sets
// Config.NoLocalSockets. LocalRankFromEnv reads the rank among the
// processes of the host from the same launcher.
func LaunchFromEnv(getenv func(string) string) (Launch, error) {
	la := Launch{
		Rank: -1,
		CA:   getenv("NEXAR_CA"), Cert: getenv("NEXAR_CERT"), Key: getenv("NEXAR_KEY"),
		Seed: getenv("NEXAR_SEED"),
	}
	p, err := pickLauncher(getenv)
	if err != nil {
		return Launch{}, err
	}
	la.Launcher = p.name
	rankVar, worldVar := p.rank, p.world
	if p.name == "torchrun" && la.Seed == "" {
		host, port := getenv("MASTER_ADDR"), getenv("MASTER_PORT")
		if host == "" || port == "" {
			return Launch{}, fmt.Errorf("realnet: torchrun environment without MASTER_ADDR and MASTER_PORT")
		}
		// torchrun --master-addr=[fd00::1] passes the brackets on.
		if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
			host = host[1 : len(host)-1]
		}
		la.Seed = net.JoinHostPort(host, port)
	}
	if la.World, err = envInt(getenv, worldVar); err != nil {
		return Launch{}, err
	}
	if la.World < 1 || la.World > maxWorld {
		return Launch{}, fmt.Errorf("realnet: %s=%d: world size must be in [1, %d]", worldVar, la.World, maxWorld)
	}
	if rankVar != "" {
		if la.Rank, err = envInt(getenv, rankVar); err != nil {
			return Launch{}, err
		}
		if la.Rank < 0 || la.Rank >= la.World {
			return Launch{}, fmt.Errorf("realnet: %s=%d outside a world of %d", rankVar, la.Rank, la.World)
		}
	}
	// One certificate per rank ('nexar-live ca --ranks N'): the paths name
	// the rank as {rank}.
	for _, f := range []struct {
		name string
		path *string
	}{{"NEXAR_CERT", &la.Cert}, {"NEXAR_KEY", &la.Key}} {
		if !strings.Contains(*f.path, rankPlaceholder) {
			continue
		}
		if la.Rank < 0 {
			return Launch{}, fmt.Errorf("realnet: %s=%q names %s, but the %s environment gives no rank", f.name, *f.path, rankPlaceholder, la.Launcher)
		}
		*f.path = strings.ReplaceAll(*f.path, rankPlaceholder, strconv.Itoa(la.Rank))
	}
	if la.Seed == "" {
		return Launch{}, fmt.Errorf("realnet: %s environment without NEXAR_SEED (the rendezvous host:port)", la.Launcher)
	}
	if _, port, err := net.SplitHostPort(la.Seed); err != nil {
		return Launch{}, fmt.Errorf("realnet: seed address %q: %w", la.Seed, err)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return Launch{}, fmt.Errorf("realnet: seed address %q: bad port", la.Seed)
	}
	if la.HostSeed, err = envBool(getenv, "NEXAR_HOST_SEED", la.Rank == 0); err != nil {
		return Launch{}, err
	}
	if la.TrustedNetwork, err = envBool(getenv, "NEXAR_TRUSTED_NETWORK", false); err != nil {
		return Launch{}, err
	}
	local, err := envBool(getenv, "NEXAR_LOCAL_SOCKETS", true)
	if err != nil {
		return Launch{}, err
	}
	la.NoLocalSockets = !local
	if v := getenv("NEXAR_SPIN_READ"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Second {
			return Launch{}, fmt.Errorf("realnet: NEXAR_SPIN_READ=%q, want a duration from 0 to 1s, such as 50us", v)
		}
		la.SpinRead = d
	}
	return la, nil
}

// launcher is the convention a process's place in the job comes from: its
// name (Launch.Launcher), the variables of the rank ("" where the seed
// assigns ranks) and of the world size, and those of the local rank.
type launcher struct {
	name        string
	rank, world string
	local       []string
}

// pickLauncher picks the convention of LaunchFromEnv: the first in its
// order whose variables are set.
func pickLauncher(getenv func(string) string) (launcher, error) {
	set := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return getenv(n) != "" })
	}
	slurmWorld := "SLURM_NTASKS"
	if set("SLURM_STEP_NUM_TASKS") {
		slurmWorld = "SLURM_STEP_NUM_TASKS"
	}
	switch {
	case set("NEXAR_WORLD"):
		p := launcher{name: "nexar", world: "NEXAR_WORLD", local: []string{"LOCAL_RANK"}}
		if set("NEXAR_RANK") {
			p.rank = "NEXAR_RANK"
		}
		return p, nil
	case set("RANK") && set("WORLD_SIZE"):
		// A Kubeflow PyTorchJob with nprocPerNode > 1 gives each pod its
		// node's rank as RANK and the count of all processes as
		// WORLD_SIZE, for torchrun to start the processes from.
		if n, err := strconv.Atoi(getenv("PET_NPROC_PER_NODE")); err == nil && n > 1 && !set("LOCAL_RANK", "TORCHELASTIC_RUN_ID") {
			return launcher{}, fmt.Errorf("realnet: PET_NPROC_PER_NODE=%d without LOCAL_RANK or TORCHELASTIC_RUN_ID: RANK and WORLD_SIZE are a Kubeflow PyTorchJob pod's, for torchrun to start %d processes from; launch the worker with torchrun", n, n)
		}
		return launcher{"torchrun", "RANK", "WORLD_SIZE", []string{"LOCAL_RANK"}}, nil
	case set("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
		return launcher{"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", []string{"OMPI_COMM_WORLD_LOCAL_RANK"}}, nil
	case set("PMI_RANK", "PMI_SIZE"):
		if set("SLURM_PROCID") && getenv("SLURM_PROCID") == getenv("PMI_RANK") && getenv(slurmWorld) == getenv("PMI_SIZE") {
			return launcher{"srun (PMI)", "PMI_RANK", "PMI_SIZE", []string{"PMI_LOCAL_RANK", "SLURM_LOCALID"}}, nil
		}
		return launcher{"mpiexec", "PMI_RANK", "PMI_SIZE", []string{"MPI_LOCALRANKID", "PMI_LOCAL_RANK"}}, nil
	case set("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"):
		return launcher{"mpirun_rsh", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", []string{"MV2_COMM_WORLD_LOCAL_RANK"}}, nil
	case set("PMI_ID", "PMI_PORT"):
		// Hydra's PMI_PORT mode (and nothing else: MVAPICH2 sets PMI_ID
		// beside its own variables) tells a process its PMI_ID and
		// where to ask for the rest.
		return launcher{}, fmt.Errorf("realnet: PMI_ID=%q and PMI_PORT=%q without PMI_RANK and PMI_SIZE: Hydra's PMI_PORT mode (mpiexec -pmi-port) gives no world size; set NEXAR_WORLD and NEXAR_RANK, or launch with mpiexec's default -pmi-fd",
			getenv("PMI_ID"), getenv("PMI_PORT"))
	case set("SLURM_PROCID"):
		// No local rank of its own: an MPI launcher's, where one is set
		// in a process that lacks its rank variables, comes first.
		return launcher{"slurm", "SLURM_PROCID", slurmWorld, nil}, nil
	case set("RANK", "WORLD_SIZE"):
		return launcher{}, fmt.Errorf("realnet: RANK=%q and WORLD_SIZE=%q: torchrun sets both; set both, or NEXAR_WORLD and NEXAR_RANK", getenv("RANK"), getenv("WORLD_SIZE"))
	case set("SLURM_NTASKS"):
		return launcher{}, fmt.Errorf("realnet: SLURM_NTASKS=%q without SLURM_PROCID: an allocation's shell or batch script, not a task of srun; start the worker with srun, or set NEXAR_WORLD and NEXAR_RANK", getenv("SLURM_NTASKS"))
	}
	return launcher{}, errors.New("realnet: no launcher environment (NEXAR_WORLD, torchrun, mpirun, mpiexec, mpirun_rsh or Slurm)")
}

// LocalRankVars are the variables through which launchers tell a process
// its rank among the processes of its host: torchrun's (which nexar-live
// run sets too), Open MPI's, Hydra's (MPICH, Intel MPI), Cray PMI's,
// MVAPICH2's and Slurm's, in the order LocalRankFromEnv reads them.
var LocalRankVars = []string{"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
	"MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}

// LocalRankFromEnv returns this process's rank among the processes of its
// host, and the variable it read: the local rank of the launcher
// LaunchFromEnv picks (torchrun's, an MPI launcher's, srun's PMI
// plugin's), or, where that launcher sets none, the first of
// LocalRankVars that is set (an MPI launcher's before the SLURM_LOCALID
// its srun-started daemons leave); -1 and "" where none is. A value that
// is not a whole number, 0 or more, is an error naming the variable.
func LocalRankFromEnv(getenv func(string) string) (int, string, error) {
	vars := LocalRankVars
	if p, err := pickLauncher(getenv); err == nil {
		vars = slices.Concat(p.local, LocalRankVars)
	}
	for _, v := range vars {
		s := getenv(v)
		if s == "" {
			continue
		}
		local, err := strconv.Atoi(s)
		if err != nil || local < 0 {
			return -1, v, fmt.Errorf("realnet: %s=%q: want a local rank (a whole number, 0 or more)", v, s)
		}
		return local, v, nil
	}
	return -1, "", nil
}

// rankPlaceholder in NEXAR_CERT and NEXAR_KEY stands for the rank.
const rankPlaceholder = "{rank}"

// envBool reads a switch: 1 or true, 0 or false, def where unset.
func envBool(getenv func(string) string, name string, def bool) (bool, error) {
	switch v := getenv(name); v {
	case "":
		return def, nil
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	default:
		return false, fmt.Errorf("realnet: %s=%q, want 1 or 0", name, v)
	}
}

func envInt(getenv func(string) string, name string) (int, error) {
	s := getenv(name)
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("realnet: %s=%q is not an integer", name, s)
	}
	return v, nil
}

// Start joins the job la describes over real UDP sockets and returns this
// process's link. cfg.Credentials, if nil, are loaded from la's paths.
// The process hosting the seed listens on the seed's port on every
// interface; the others on a port of the system's choice, and the seed
// tells the others the address it sees them at.
func Start(ctx context.Context, la Launch, cfg Config) (*Link, error) {
	if cfg.Credentials == nil {
		for _, v := range []struct{ name, path, what string }{{"NEXAR_CA", la.CA, "the cluster CA's certificate"},
			{"NEXAR_CERT", la.Cert, "this rank's certificate"}, {"NEXAR_KEY", la.Key, "this rank's key"}} {
			if v.path == "" {
				return nil, fmt.Errorf("realnet: %s is not set: it names the file of %s ('nexar-live ca DIR' makes the files and prints the exports)", v.name, v.what)
			}
		}
		creds, err := LoadCredentials(la.CA, la.Cert, la.Key)
		if err != nil {
			return nil, err
		}
		cfg.Credentials = creds
	}
	cfg.TrustedNetwork = cfg.TrustedNetwork || la.TrustedNetwork
	cfg.NoLocalSockets = cfg.NoLocalSockets || la.NoLocalSockets
	if cfg.SpinRead == 0 {
		cfg.SpinRead = la.SpinRead
	}
	bind := ":0"
	if la.HostSeed {
		_, port, err := net.SplitHostPort(la.Seed)
		if err != nil {
			return nil, fmt.Errorf("realnet: seed address %q: %w", la.Seed, err)
		}
		bind = ":" + port
	}
	ep, err := ListenAddr(bind, cfg)
	if err != nil {
		return nil, err
	}
	if la.HostSeed {
		if err := ep.HostSeed(la.World, la.Seed); err != nil {
			ep.Close()
			return nil, err
		}
	}
	l, err := ep.Join(ctx, la.Seed, la.Rank, la.World)
	if err != nil {
		ep.Close()
		return nil, err
	}
	return l, nil
}
