package textdist

import "testing"

func TestEdit(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"all_gpu", "all_gpus", 1}, {"bucket_", "bucket", 1}, {"kitten", "sitting", 3},
		{"mode", "model_parallel_npu_group", 20}, {string(make([]byte, 65)), "a", 64},
	} {
		if got := Edit(c.a, c.b); got != c.want {
			t.Errorf("Edit(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
