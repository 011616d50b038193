package explain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/passes/schedule"
)

// render writes rows one per line: step | k | wait | release | issue |
// producer | store | in flight.
func render(rows []row) string {
	var sb strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&sb, "%s|%s|%s|%s|%s|%s|%s|%s\n", r.step, r.k, r.wait, r.release, r.issue, r.producer, r.store, r.inflight)
	}
	return sb.String()
}

func newRing(l *schedule.LoopSchedule) *ring {
	return &ring{l: l,
		wait:  func(g int64) (int64, bool) { return (schedule.ParityRing{N: l.Stages}).At(g), true },
		label: func(g int64) string { return fmt.Sprint(g) }}
}

func TestTimelineRows(t *testing.T) {
	cases := []struct {
		name string
		l    schedule.LoopSchedule
		head int64
		want string
	}{
		{
			// tma-pipeline's GEMM: N-1 loads ahead, a slot released one
			// iteration after its use (wgmma wait_group 1).
			name: "wgmma readers",
			l:    schedule.LoopSchedule{Stages: 4, Trip: 10, Prologue: 3, Ahead: 3, ReleaseLag: 1},
			head: 5,
			want: `prologue||||s0:0 s1:1 s2:2|||s0:0 s1:1 s2:2
j=0|0|s0 parity 0|-|s3:3|||s1:1 s2:2 s3:3
j=1|1|s1 parity 0|s0:0|s0:4|||s2:2 s3:3 s0:4
j=2|2|s2 parity 0|s1:1|s1:5|||s3:3 s0:4 s1:5
j=3|3|s3 parity 0|s2:2|s2:6|||s0:4 s1:5 s2:6
j=4|4|s0 parity 1|s3:3|s3:7|||s1:5 s2:6 s3:7
...||(2 more iterations)|||||
j=7|7|s3 parity 1|s2:6|-|||s0:8 s1:9
j=8|8|s0 parity 0|s3:7|-|||s1:9
j=9|9|s1 parity 0|s0:8|-|||-
`,
		},
		{
			// Thread readers with a block barrier after their reads: the
			// slot is refilled in the iteration that read it, N in flight.
			name: "full depth with output slots",
			l:    schedule.LoopSchedule{Stages: 2, Trip: 4, Prologue: 2, Ahead: 2, ReleaseLag: 0, StoreStages: 2},
			head: 2,
			want: `prologue||||s0:0 s1:1|||s0:0 s1:1
j=0|0|s0 parity 0|s0:0|s0:2||write o0, TMA store|s1:1 s0:2
j=1|1|s1 parity 0|s1:1|s1:3||write o1, TMA store|s0:2 s1:3
j=2|2|s0 parity 1|s0:2|-||write o0, TMA store|s1:3
j=3|3|s1 parity 1|s1:3|-||write o1, TMA store|-
`,
		},
		{
			// One slot: each iteration loads its own tile first.
			name: "one stage",
			l:    schedule.LoopSchedule{Stages: 1, Trip: 3, Prologue: 0, Ahead: 0, ReleaseLag: 0},
			head: 5,
			want: `j=0|0|s0 parity 0|s0:0|s0:0 (before the wait)|||-
j=1|1|s0 parity 1|s0:1|s0:1 (before the wait)|||-
j=2|2|s0 parity 0|s0:2|s0:2 (before the wait)|||-
`,
		},
		{
			// A producer warpgroup: it fills the ring, then refills a slot
			// as soon as the consumers release it.
			name: "warp-specialised",
			l:    schedule.LoopSchedule{Stages: 3, Trip: 6, Prologue: 3, Ahead: 2, ReleaseLag: 1, IssueOnRelease: true},
			head: 3,
			want: `prologue||||s0:0 s1:1 s2:2|||s0:0 s1:1 s2:2
j=0|0|s0 parity 0|-|-|||s1:1 s2:2
j=1|1|s1 parity 0|s0:0|s0:3|||s2:2 s0:3
j=2|2|s2 parity 0|s1:1|s1:4|||s0:3 s1:4
j=3|3|s0 parity 1|s2:2|s2:5|||s1:4 s2:5
j=4|4|s1 parity 1|s0:3|-|||s2:5
j=5|5|s2 parity 1|s1:4|-|||-
`,
		},
		{
			// Ping-pong: per tile, the first K step releases nothing and the
			// last also releases its own slot; the ring runs on across tiles.
			name: "ping-pong tile boundary",
			l:    schedule.LoopSchedule{Stages: 2, Trip: 4, Persistent: true, Prologue: 2, Ahead: 1, ReleaseLag: 1, IssueOnRelease: true, PerTileRelease: true},
			head: 1,
			want: `prologue||||s0:0 s1:1|||s0:0 s1:1
j=0|0|s0 parity 0|-|-|||s1:1
j=1|1|s1 parity 0|s0:0|s0:2|||s0:2
j=2|2|s0 parity 1|s1:1|s1:3|||s1:3
j=3|3|s1 parity 1|s0:2 s1:3|s0:4 s1:5|||s0:4 s1:5
j=4|4|s0 parity 0|-|-|||s1:5
j=5|5|s1 parity 0|s0:4|s0:6|||s0:6
`,
		},
		{
			name: "dynamic trip count",
			l:    schedule.LoopSchedule{Stages: 2, Trip: -1, Prologue: 1, Ahead: 1, ReleaseLag: 1},
			head: 2,
			want: `prologue||||s0:0 if < T|||s0:0
j=0|0|s0 parity 0|-|s1:1 if < T|||s1:1
j=1|1|s1 parity 0|s0:0|s0:2 if < T|||s0:2
...|(to T-2)||||||
last 1|T-1..T-1|slot j mod 2|as above|- (j+1 >= T)|||the rest of the ring
`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.l
			got := render(newRing(&l).rows(c.head))
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestIssuesFollowReleases checks, for the producer discipline, that no
// position is issued before the slot's previous position was released
// and that every position is issued exactly once.
func TestIssuesFollowReleases(t *testing.T) {
	for n := int64(1); n <= 5; n++ {
		for trip := int64(1); trip <= 7; trip++ {
			for _, pp := range []bool{false, true} {
				l := &schedule.LoopSchedule{Stages: n, Trip: trip, Persistent: pp, Prologue: n, ReleaseLag: 1, Ahead: n - 1,
					IssueOnRelease: true, PerTileRelease: pp}
				if n == 1 {
					l.ReleaseLag, l.Ahead = 0, 1
				}
				total := trip
				if pp {
					total = 3 * trip
				}
				released := map[int64]bool{}
				issued := map[int64]int{}
				for _, g := range l.Issues(-1, total) {
					issued[g]++
				}
				for j := int64(0); j < total; j++ {
					for _, q := range l.Releases(j) {
						if released[q] || q > j {
							t.Fatalf("n=%d trip=%d pp=%v: position %d released twice or before its use (iteration %d)", n, trip, pp, q, j)
						}
						released[q] = true
					}
					for _, g := range l.Issues(j, total) {
						if g >= n && !released[g-n] {
							t.Fatalf("n=%d trip=%d pp=%v: position %d issued in iteration %d before position %d was released", n, trip, pp, g, j, g-n)
						}
						issued[g]++
					}
				}
				for g := int64(0); g < total; g++ {
					mustRelease := pp || g < total-l.ReleaseLag // a ping-pong tile's last slot is released after its K loop
					if issued[g] != 1 || mustRelease && !released[g] {
						t.Fatalf("n=%d trip=%d pp=%v: position %d issued %d times, released %v", n, trip, pp, g, issued[g], released[g])
					}
				}
			}
		}
	}
}
