package realnet

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Launch says where a process stands in a job and how it finds the
// others. Clusters are started by the scheduler the site already has;
// LaunchFromEnv reads what it leaves in the environment.
type Launch struct {
	// Launcher names the convention the values came from: "torchrun",
	// "mpirun", "mpiexec", "mpirun_rsh", "slurm" or "nexar".
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
// (os.Getenv in a real process). It recognises, in this order:
//
//	torchrun:   RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//	mpirun:     OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (Open MPI), and NEXAR_SEED
//	mpiexec:    PMI_RANK, PMI_SIZE (MPICH, Intel MPI), and NEXAR_SEED
//	mpirun_rsh: MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_SIZE (MVAPICH2), and NEXAR_SEED
//	Slurm:      SLURM_PROCID, SLURM_NTASKS, and NEXAR_SEED
//	nexar:      NEXAR_WORLD, NEXAR_SEED, and NEXAR_RANK if the rank is known
//
// NEXAR_SEED ("host:port") overrides MASTER_ADDR:MASTER_PORT. Rank 0 hosts
// the seed when ranks are known; NEXAR_HOST_SEED=1 or 0 overrides that
// (a nexar job without ranks needs a seed run by ServeSeed). NEXAR_CA,
// NEXAR_CERT and NEXAR_KEY name the credentials ({rank} in the last two
// stands for the rank, for certificates issued per rank), and
// NEXAR_TRUSTED_NETWORK=1 allows plaintext bulk transfers;
// NEXAR_SPIN_READ sets Config.SpinRead; NEXAR_LOCAL_SOCKETS=0 sets
// Config.NoLocalSockets.
func LaunchFromEnv(getenv func(string) string) (Launch, error) {
	la := Launch{
		Rank: -1,
		CA:   getenv("NEXAR_CA"), Cert: getenv("NEXAR_CERT"), Key: getenv("NEXAR_KEY"),
		Seed: getenv("NEXAR_SEED"),
	}
	var rankVar, worldVar string
	switch {
	case getenv("RANK") != "" || getenv("WORLD_SIZE") != "":
		la.Launcher, rankVar, worldVar = "torchrun", "RANK", "WORLD_SIZE"
		if la.Seed == "" {
			host, port := getenv("MASTER_ADDR"), getenv("MASTER_PORT")
			if host == "" || port == "" {
				return Launch{}, fmt.Errorf("realnet: torchrun environment without MASTER_ADDR and MASTER_PORT")
			}
			la.Seed = net.JoinHostPort(host, port)
		}
	// An MPI launcher's variables come before Slurm's: mpirun and
	// mpiexec inside a Slurm allocation start their daemons with srun, and
	// the ranks inherit the daemons' SLURM_PROCID and SLURM_NTASKS.
	case getenv("OMPI_COMM_WORLD_RANK") != "" || getenv("OMPI_COMM_WORLD_SIZE") != "":
		la.Launcher, rankVar, worldVar = "mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"
	case getenv("PMI_RANK") != "" || getenv("PMI_SIZE") != "":
		la.Launcher, rankVar, worldVar = "mpiexec", "PMI_RANK", "PMI_SIZE"
	case getenv("MV2_COMM_WORLD_RANK") != "" || getenv("MV2_COMM_WORLD_SIZE") != "":
		la.Launcher, rankVar, worldVar = "mpirun_rsh", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"
	case getenv("SLURM_PROCID") != "" || getenv("SLURM_NTASKS") != "":
		la.Launcher, rankVar, worldVar = "slurm", "SLURM_PROCID", "SLURM_NTASKS"
	case getenv("NEXAR_WORLD") != "":
		la.Launcher, worldVar = "nexar", "NEXAR_WORLD"
		if getenv("NEXAR_RANK") != "" {
			rankVar = "NEXAR_RANK"
		}
	default:
		return Launch{}, fmt.Errorf("realnet: no launcher environment (torchrun, mpirun, mpiexec, Slurm or NEXAR_WORLD)")
	}
	var err error
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
