package nexarlive

import (
	"flag"

	"github.com/nexar-go/nexar-go/mesh"
	"github.com/nexar-go/nexar-go/realnet"
)

// meshFlag is --mesh, on run and worker: which ranks hold connections.
type meshFlag struct {
	spec mesh.Spec
	set  bool
}

const meshFlagHelp = `  --mesh M             which ranks hold a connection: "full" (default), "hypercube"
                       or "kregular:K"; the other pairs exchange their messages
                       through relays along the mesh's shortest routes (each
                       hop a whole message, as nexar-sim's [network] mesh
                       models them)
`

func (f *meshFlag) register(fs *flag.FlagSet) {
	fs.Func("mesh", `"full", "hypercube" or "kregular:K": the ranks' connections; other pairs relay`, func(v string) error {
		s, err := mesh.Parse(v)
		if err != nil {
			return err
		}
		f.spec, f.set = s, true
		return nil
	})
}

// apply sets the mesh of cfg, checking it can be built on np ranks (0: a
// worker, which checks when it knows its world).
func (f *meshFlag) apply(cfg *realnet.Config, np int) error {
	cfg.Mesh = f.spec
	if np > 0 {
		_, err := mesh.New(f.spec, np)
		return err
	}
	return nil
}

func (f *meshFlag) workerArgs() []string {
	if !f.set {
		return nil
	}
	return []string{"--mesh", f.spec.String()}
}
