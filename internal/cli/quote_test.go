package cli

import "testing"

func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"nexar-sim", "run", "-b", "1K", "--out", "out/"}, "nexar-sim run -b 1K --out out/"},
		{[]string{"nexar-live", "run", "a b.toml", ""}, "nexar-live run 'a b.toml' ''"},
		{[]string{"x", "it's", "$HOME"}, `x 'it'\''s' '$HOME'`},
	} {
		if got := CommandLine(tt.args); got != tt.want {
			t.Errorf("CommandLine(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
}
