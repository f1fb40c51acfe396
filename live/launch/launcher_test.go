package launch

import (
	"slices"
	"testing"
)

func TestWorkerEnv(t *testing.T) {
	base := []string{"PATH=/bin", "RANK=3", "WORLD_SIZE=8", "NEXAR_SEED=elsewhere:1", "NEXAR_LIVE_TEST=kept", "SLURM_PROCID=2", "HOME=/root"}
	got := workerEnv(base, map[string]string{"NEXAR_WORLD": "2", "NEXAR_RANK": "1"})
	want := []string{"PATH=/bin", "NEXAR_LIVE_TEST=kept", "HOME=/root", "NEXAR_RANK=1", "NEXAR_WORLD=2"}
	if !slices.Equal(got, want) {
		t.Errorf("workerEnv = %q, want %q", got, want)
	}
}
