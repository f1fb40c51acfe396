package launch

import (
	"slices"
	"testing"

	"github.com/nexar-go/nexar-go/realnet"
)

func TestWorkerEnv(t *testing.T) {
	base := []string{"PATH=/bin", "RANK=3", "WORLD_SIZE=8", "NEXAR_SEED=elsewhere:1", "NEXAR_LIVE_TEST=kept", "SLURM_PROCID=2", "HOME=/root"}
	got := workerEnv(base, map[string]string{"NEXAR_WORLD": "2", "NEXAR_RANK": "1"})
	want := []string{"PATH=/bin", "NEXAR_LIVE_TEST=kept", "HOME=/root", "NEXAR_RANK=1", "NEXAR_WORLD=2"}
	if !slices.Equal(got, want) {
		t.Errorf("workerEnv = %q, want %q", got, want)
	}
}

// TestWorkerEnvDropsLaunchVars: a worker inherits none of the variables
// realnet reads for its place in the job or its local rank from the
// launcher's environment (a job's srun, an MPI launcher).
func TestWorkerEnvDropsLaunchVars(t *testing.T) {
	for _, k := range append([]string{"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "PMI_ID", "PMI_PORT", "PET_NPROC_PER_NODE", "TORCHELASTIC_RUN_ID"},
		realnet.LocalRankVars...) {
		got := workerEnv([]string{"PATH=/bin", k + "=7"}, map[string]string{"NEXAR_WORLD": "2"})
		if want := []string{"PATH=/bin", "NEXAR_WORLD=2"}; !slices.Equal(got, want) {
			t.Errorf("%s: workerEnv = %q, want %q", k, got, want)
		}
	}
}
