package sm90

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestCheck(t *testing.T) {
	u := int64(Unknown)
	cases := []struct {
		l    Launch
		want string // "" = valid
	}{
		{Launch{Grid: [3]int64{132, 1, 1}, Block: [3]int64{384, 1, 1}}, ""},
		{Launch{Grid: [3]int64{MaxGridDimX, MaxGridDimYZ, MaxGridDimYZ}, Block: [3]int64{32, 32, 1}}, ""},
		{Launch{Grid: [3]int64{u, u, u}, Block: [3]int64{u, 1, 1}}, ""},
		{Launch{Grid: [3]int64{64, 1, 1}, Block: [3]int64{128, 1, 1}, Cluster: [3]int64{2, 1, 1}}, ""},
		{Launch{Grid: [3]int64{0, 1, 1}, Block: [3]int64{1, 1, 1}}, "grid size x = 0 is outside [1, 2147483647]"},
		{Launch{Grid: [3]int64{1, 65536, 1}, Block: [3]int64{1, 1, 1}}, "grid size y = 65536 is outside [1, 65535]"},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{2048, 1, 1}}, "block size x = 2048 is outside [1, 1024]"},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{1, 1, 65}}, "block size z = 65 is outside [1, 64]"},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{64, 32, 1}}, "2048 threads per block (64 x 32 x 1), over the limit of 1024"},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{u, 32, 64}}, ""}, // threads unknown
		{Launch{Grid: [3]int64{3, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{2, 1, 1}}, "grid size x = 3 is not a multiple of the cluster size 2"},
		{Launch{Grid: [3]int64{16, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{16, 1, 1}}, "clusters of 16 blocks (16 x 1 x 1), over the portable limit of 8; up to 16 need the launch to opt in with {nonPortableClusterSize = true}"},
		{Launch{Grid: [3]int64{8, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{8, 1, 1}}, ""},
		{Launch{Grid: [3]int64{9, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{9, 1, 1}}, "clusters of 9 blocks (9 x 1 x 1), over the portable limit of 8"},
		// With the opt-in: up to 16 blocks, still whole clusters.
		{Launch{Grid: [3]int64{16, 16, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{4, 4, 1}, NonPortableCluster: true}, ""},
		{Launch{Grid: [3]int64{9, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{9, 1, 1}, NonPortableCluster: true}, ""},
		{Launch{Grid: [3]int64{32, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{2, 2, 4}, NonPortableCluster: true}, "grid size y = 1 is not a multiple of the cluster size 2"},
		{Launch{Grid: [3]int64{17, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{17, 1, 1}, NonPortableCluster: true}, "clusters of 17 blocks (17 x 1 x 1), over sm_90's limit of 16"},
		{Launch{Grid: [3]int64{32, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{8, 4, 1}, NonPortableCluster: true}, "grid size y = 1 is not a multiple of the cluster size 4"},
		{Launch{Grid: [3]int64{32, 4, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{8, 4, 1}, NonPortableCluster: true}, "clusters of 32 blocks (8 x 4 x 1), over sm_90's limit of 16"},
		// A cluster size not known at compile time is checked at launch.
		{Launch{Grid: [3]int64{32, 1, 1}, Block: [3]int64{1, 1, 1}, Cluster: [3]int64{u, 1, 1}}, ""},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{1, 1, 1}, DynamicSharedBytes: 232449}, "232449 bytes of dynamic shared memory, outside [0, 232448]"},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{1, 1, 1}, DynamicSharedBytes: u}, ""},
		// -1 is a size like any other, not "unknown".
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{1, 1, 1}, DynamicSharedBytes: -1}, "-1 bytes of dynamic shared memory, outside [0, 232448]"},
		{Launch{Grid: [3]int64{1, 1, 1}, Block: [3]int64{-1, 1, 1}}, "block size x = -1 is outside [1, 1024]"},
		{Launch{Grid: [3]int64{-1, 1, 1}, Block: [3]int64{1, 1, 1}}, "grid size x = -1 is outside [1, 2147483647]"},
	}
	for _, c := range cases {
		err := c.l.Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", c.l, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: got %v, want %q", c.l, err, c.want)
		}
	}
}

func TestNonPortableCluster(t *testing.T) {
	cases := []struct {
		attr    ir.Attribute // nil: absent
		want    bool
		wantErr string
	}{
		{nil, false, ""},
		{ir.Bool(true), true, ""},
		{ir.Bool(false), false, ""},
		{ir.Unit, false, "nonPortableClusterSize must be true or false, not unit"},
		{ir.IntAttr(1, ir.I32), false, "nonPortableClusterSize must be true or false, not 1 : i32"},
	}
	for _, c := range cases {
		st := &ir.OperationState{Name: "gpu.launch_func"}
		if c.attr != nil {
			st.AddAttr(NonPortableClusterAttr, c.attr)
		}
		got, err := NonPortableCluster(ir.NewOperation(st))
		switch {
		case c.wantErr != "" && (err == nil || err.Error() != c.wantErr):
			t.Errorf("%v: got error %v, want %q", c.attr, err, c.wantErr)
		case c.wantErr == "" && err != nil:
			t.Errorf("%v: unexpected error %v", c.attr, err)
		case got != c.want:
			t.Errorf("%v: got %v, want %v", c.attr, got, c.want)
		}
	}
}
