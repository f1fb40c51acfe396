package schedule

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Load reads the MSCCL XML schedule at path and checks it (see Parse).
func Load(path string) (*Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return Parse(path, data)
}

// Parse reads an MSCCL XML schedule, file naming it in errors, and checks
// it: every attribute the executor requires present and well formed,
// threadblocks and steps numbered from 0 without gaps, peers and channels
// in range, offsets within the buffers, dependencies naming steps that
// exist and are marked hasdep, and a dry run of every GPU's program
// together that finds a receive nobody sends or a cycle of waits (a
// deadlock), naming the steps each GPU waits on. An error names the file,
// the line and what was expected.
func Parse(file string, data []byte) (*Schedule, error) {
	p := &parser{file: file, d: xml.NewDecoder(bytes.NewReader(data))}
	s, err := p.document()
	if err != nil {
		return nil, err
	}
	s.File = file
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	file string
	d    *xml.Decoder
}

func (p *parser) line() int {
	l, _ := p.d.InputPos()
	return l
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, p.line(), fmt.Sprintf(format, args...))
}

// next returns the next start or end element, skipping text, comments
// and the XML declaration.
func (p *parser) next() (xml.Token, error) {
	for {
		t, err := p.d.Token()
		if err == io.EOF {
			return nil, err
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) && se.Msg == "unexpected EOF" {
				return nil, fmt.Errorf("%s:%d: the file ends before its elements are closed: want </algo>", p.file, se.Line)
			}
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%s:%d: malformed XML: %s", p.file, se.Line, se.Msg)
			}
			return nil, p.errorf("malformed XML: %v", err)
		}
		switch t := t.(type) {
		case xml.StartElement, xml.EndElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) != 0 {
				return nil, p.errorf("unexpected text %q: want only elements", abbrev(string(t)))
			}
		}
	}
}

func abbrev(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// children calls fn for every child element of the element just opened,
// which must be called want, until its end.
func (p *parser) children(parent, want string, fn func(xml.StartElement) error) error {
	for {
		t, err := p.next()
		if err == io.EOF {
			return p.errorf("<%s> is not closed", parent)
		}
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.EndElement:
			return nil
		case xml.StartElement:
			if want != "" && t.Name.Local != want {
				return p.errorf("<%s> inside <%s>: want <%s>", t.Name.Local, parent, want)
			}
			if err := fn(t); err != nil {
				return err
			}
		}
	}
}

func (p *parser) document() (*Schedule, error) {
	t, err := p.next()
	if err == io.EOF {
		return nil, fmt.Errorf("%s:1: empty file: want an <algo> element", p.file)
	}
	if err != nil {
		return nil, err
	}
	start, ok := t.(xml.StartElement)
	if !ok || start.Name.Local != "algo" {
		return nil, p.errorf("want <algo> as the root element")
	}
	s, err := p.algo(start)
	if err != nil {
		return nil, err
	}
	if _, err := p.next(); err != io.EOF {
		if err != nil {
			return nil, err
		}
		return nil, p.errorf("content after </algo>")
	}
	return s, nil
}

// attrs reads an element's attributes by name.
type attrs struct {
	p    *parser
	elem string
	m    map[string]string
	err  error
}

func (p *parser) attrs(e xml.StartElement) *attrs {
	a := &attrs{p: p, elem: e.Name.Local, m: map[string]string{}}
	for _, at := range e.Attr {
		a.m[at.Name.Local] = at.Value
	}
	return a
}

func (a *attrs) str(key, def string, required bool) string {
	v, ok := a.m[key]
	if !ok {
		if required && a.err == nil {
			a.err = a.p.errorf("<%s> lacks attribute %s", a.elem, key)
		}
		return def
	}
	return v
}

func (a *attrs) int64(key string, def int64, required bool) int64 {
	v := a.str(key, "", required)
	if v == "" {
		if _, ok := a.m[key]; ok && a.err == nil {
			a.err = a.p.errorf("<%s> %s=\"\": want an integer", a.elem, key)
		}
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && a.err == nil {
		a.err = a.p.errorf("<%s> %s=%q: want an integer", a.elem, key, v)
	}
	return n
}

// int reads an integer attribute that must lie in [lo, hi].
func (a *attrs) int(key string, lo, hi int) int {
	n := a.int64(key, 0, true)
	if a.err == nil && (n < int64(lo) || n > int64(hi)) {
		a.err = a.p.errorf("<%s> %s=%d: want %d to %d", a.elem, key, n, lo, hi)
	}
	return int(n)
}

func (a *attrs) flag(key string, def bool, required bool) bool {
	d := int64(0)
	if def {
		d = 1
	}
	n := a.int64(key, d, required)
	if a.err == nil && n != 0 && n != 1 {
		a.err = a.p.errorf("<%s> %s=%d: want 0 or 1", a.elem, key, n)
	}
	return n == 1
}

func (a *attrs) buf(key string) byte {
	v := a.str(key, "", true)
	if a.err == nil && v != "i" && v != "o" && v != "s" {
		a.err = a.p.errorf("<%s> %s=%q: want i (input), o (output) or s (scratch)", a.elem, key, v)
	}
	if v == "" {
		return 0
	}
	return v[0]
}

// Limits of the reader: far above what the executor accepts, low enough
// that a hostile file cannot make the interpreter allocate without bound.
const (
	maxGPUs   = 1 << 12
	maxChunks = 1 << 16
	maxSteps  = 1 << 16
	maxChans  = 64
	maxTBs    = 128
)

func (p *parser) algo(e xml.StartElement) (*Schedule, error) {
	a := p.attrs(e)
	s := &Schedule{line: p.line()}
	s.Name = a.str("name", "", true)
	s.Proto = a.str("proto", "", true)
	s.NChannels = a.int("nchannels", 1, maxChans)
	s.NChunksPerLoop = a.int("nchunksperloop", 1, maxChunks)
	s.NGPUs = a.int("ngpus", 1, maxGPUs)
	s.Coll = a.str("coll", "", true)
	s.InPlace = a.flag("inplace", false, true)
	// msccl-tools writes no outofplace: a schedule it wrote in place
	// relies on its input being a chunk of its output.
	s.OutOfPlace = a.flag("outofplace", !s.InPlace, false)
	s.MinBytes = a.int64("minBytes", 0, false)
	s.MaxBytes = a.int64("maxBytes", 0, false)
	if a.err != nil {
		return nil, a.err
	}
	switch s.Proto {
	case "Simple", "LL", "LL128":
	default:
		return nil, fmt.Errorf("%s:%d: <algo proto=%q>: want Simple, LL or LL128", p.file, s.line, s.Proto)
	}
	if s.MinBytes < 0 || s.MaxBytes < 0 {
		return nil, fmt.Errorf("%s:%d: <algo> minBytes and maxBytes must not be negative", p.file, s.line)
	}
	err := p.children("algo", "gpu", func(e xml.StartElement) error {
		g, err := p.gpu(e)
		if err == nil {
			s.GPUs = append(s.GPUs, g)
		}
		return err
	})
	return s, err
}

func (p *parser) gpu(e xml.StartElement) (GPU, error) {
	a := p.attrs(e)
	g := GPU{line: p.line()}
	g.ID = a.int("id", 0, maxGPUs-1)
	g.IChunks = a.int("i_chunks", 0, maxChunks)
	g.OChunks = a.int("o_chunks", 0, maxChunks)
	g.SChunks = a.int("s_chunks", 0, maxChunks)
	if a.err != nil {
		return g, a.err
	}
	err := p.children("gpu", "tb", func(e xml.StartElement) error {
		tb, err := p.tb(e)
		if err == nil {
			g.TBs = append(g.TBs, tb)
		}
		return err
	})
	return g, err
}

func (p *parser) tb(e xml.StartElement) (TB, error) {
	a := p.attrs(e)
	tb := TB{line: p.line()}
	tb.ID = a.int("id", 0, maxTBs-1)
	tb.Send = a.int("send", -1, maxGPUs-1)
	tb.Recv = a.int("recv", -1, maxGPUs-1)
	tb.Chan = a.int("chan", 0, maxChans-1)
	if a.err != nil {
		return tb, a.err
	}
	err := p.children("tb", "step", func(e xml.StartElement) error {
		st, err := p.step(e)
		if err == nil {
			tb.Steps = append(tb.Steps, st)
		}
		return err
	})
	return tb, err
}

func (p *parser) step(e xml.StartElement) (Step, error) {
	a := p.attrs(e)
	st := Step{line: p.line()}
	st.S = a.int("s", 0, maxSteps)
	st.Type = Op(a.str("type", "", true))
	st.SrcBuf = a.buf("srcbuf")
	st.SrcOff = a.int("srcoff", -1, maxChunks)
	st.DstBuf = a.buf("dstbuf")
	st.DstOff = a.int("dstoff", -1, maxChunks)
	st.Cnt = a.int("cnt", 0, maxChunks)
	st.DepID = a.int("depid", -1, maxTBs-1)
	st.Deps = a.int("deps", -1, maxSteps)
	st.HasDep = a.flag("hasdep", false, true)
	if a.err != nil {
		return st, a.err
	}
	if !validOp(st.Type) {
		return st, p.errorf("<step type=%q>: want s, r, rcs, rrs, rrc, rrcs, cpy, re or nop", st.Type)
	}
	// A step has no children; its end element closes it.
	return st, p.children("step", "", func(e xml.StartElement) error {
		return p.errorf("<%s> inside <step>: want none", e.Name.Local)
	})
}
