package calibrate

import (
	"fmt"
	"strings"

	"github.com/nexar-go/nexar-go/device"
)

// collectiveNames maps the names benchmarks give collectives (nccl-tests'
// binaries without "_perf", OSU's titles and binaries, lower case) to
// the catalogue's.
var collectiveNames = map[string]string{
	"all_reduce": "allreduce", "allreduce": "allreduce",
	"all_gather": "allgather", "allgather": "allgather",
	"reduce_scatter": "reduce_scatter", "reduce-scatter": "reduce_scatter", "reducescatter": "reduce_scatter",
	"broadcast": "broadcast", "bcast": "broadcast",
	"reduce": "reduce", "alltoall": "alltoall", "all_to_all": "alltoall", "all-to-all": "alltoall",
	"all-to-all personalized exchange": "alltoall",
	"gather":                           "gather", "scatter": "scatter", "barrier": "barrier", "scan": "scan",
}

// pointToPointNames maps benchmark names (OSU's binaries and titles,
// nccl-tests' sendrecv) to the PointToPoint benchmark they are.
var pointToPointNames = map[string]string{
	"latency": PingPong, "osu_latency": PingPong, "pt2pt_latency": PingPong, "pingpong": PingPong,
	"bw": Stream, "bandwidth": Stream, "osu_bw": Stream, "pt2pt_bw": Stream,
	"bibw": BiStream, "bi-directional bandwidth": BiStream, "osu_bibw": BiStream, "pt2pt_bibw": BiStream,
	"sendrecv": Shift,
}

// benchmarkName is the catalogue's collective (or PointToPoint) and, for
// point-to-point benchmarks, the benchmark, that a name given by a log or
// a flag stands for: "all_reduce", "allreduce", "osu_allreduce",
// "osu_bw", "bw". ok is false for names nexar-go does not model.
func benchmarkName(name string) (collective, benchmark string, ok bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimSuffix(strings.TrimSuffix(n, "_mpi"), "_perf")
	if p, ok := pointToPointNames[n]; ok {
		return PointToPoint, p, true
	}
	n = strings.TrimPrefix(n, "osu_")
	if p, ok := pointToPointNames[n]; ok {
		return PointToPoint, p, true
	}
	if c, ok := collectiveNames[n]; ok {
		return c, "", true
	}
	return "", "", false
}

// ncclTypes maps nccl-tests' type names to dtypes.
var ncclTypes = map[string]device.DType{
	"half": device.F16, "float16": device.F16, "fp16": device.F16, "bfloat16": device.BF16, "bf16": device.BF16,
	"float": device.F32, "float32": device.F32, "fp32": device.F32, "double": device.F64, "float64": device.F64,
	"int8": device.I8, "char": device.I8, "uint8": device.U8, "int32": device.I32, "int": device.I32,
	"uint32": device.U32, "int64": device.I64, "uint64": device.U64,
}

// logDType is the dtype a log's or a flag's type name stands for:
// nccl-tests' names ("float", "bfloat16") or nexar-go's ("f32").
func logDType(name string) (device.DType, bool) {
	n := strings.ToLower(name)
	if dt, ok := ncclTypes[n]; ok {
		return dt, true
	}
	dt, err := device.ParseDType(n)
	return dt, err == nil
}

// sameSizeDType is a dtype of size bytes, for element types nexar-go has
// not (nccl-tests' f8e4m3): the model moves and reduces bytes, so one of
// the same size times it alike.
func sameSizeDType(size int) (device.DType, bool) {
	for _, dt := range []device.DType{device.U8, device.F16, device.F32, device.F64} {
		if dt.Size() == size {
			return dt, true
		}
	}
	return 0, false
}

// mpiTypes maps MPI datatypes (OSU's "# Datatype: MPI_FLOAT." line and
// -T flag) to dtypes.
var mpiTypes = map[string]device.DType{
	"CHAR": device.I8, "SIGNED_CHAR": device.I8, "UNSIGNED_CHAR": device.U8, "BYTE": device.U8,
	"SHORT": device.I16, "UNSIGNED_SHORT": device.U16, "INT": device.I32, "UNSIGNED": device.U32,
	"LONG": device.I64, "UNSIGNED_LONG": device.U64, "LONG_LONG": device.I64, "LONG_LONG_INT": device.I64,
	"FLOAT": device.F32, "DOUBLE": device.F64, "INT8_T": device.I8, "INT16_T": device.I16, "INT32_T": device.I32,
	"INT64_T": device.I64, "UINT8_T": device.U8, "UINT16_T": device.U16, "UINT32_T": device.U32, "UINT64_T": device.U64,
	// The MPI 4.x extensions IMB-MPI1's -red_data_type float16 and
	// bfloat16 print.
	"MPIX_C_FLOAT16": device.F16, "MPIX_C_BF16": device.BF16,
}

// mpiDType is the dtype of an MPI datatype name, with or without its
// "MPI_" prefix, in any case.
func mpiDType(name string) (device.DType, bool) {
	n := strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(name), "."))
	dt, ok := mpiTypes[strings.TrimPrefix(n, "MPI_")]
	return dt, ok
}

// resultDType is the dtype of a result's type name as nccl-tests prints
// it; a type nexar-go has not (f8e4m3) is one of the same size, its
// size over its count, which times alike.
func resultDType(name string, size, count int64) (device.DType, error) {
	dt, ok := logDType(name)
	if !ok && count > 0 && size%count == 0 {
		dt, ok = sameSizeDType(int(size / count))
	}
	if !ok {
		return 0, fmt.Errorf("type %q: want an element type (float, half, bfloat16, int8, ...)", name)
	}
	return dt, nil
}

// resultOp is the op of a result's redop as nccl-tests prints it: none
// (a collective that reduces nothing), avg and the pre-multiplied sums
// move and add as a sum does.
func resultOp(name string) (device.Op, error) {
	op := strings.ToLower(strings.TrimSpace(name))
	switch op {
	case "none", "avg", "premulsum", "mulsum", "":
		op = "sum" // what the network does is a sum's
	}
	o, err := device.ParseOp(op)
	if err != nil {
		return 0, fmt.Errorf("redop %q: want sum, prod, min, max, avg or none", name)
	}
	return o, nil
}

// ncclRelease is NCCL's release of its version code: NCCL_VERSION(X,Y,Z)
// is X*10000+Y*100+Z from 2.9, X*1000+Y*100+Z before.
func ncclRelease(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code/100%10, code%100)
}
