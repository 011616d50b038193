// Package toolchain runs the external LLVM tools tmac relies on (llc).
package toolchain

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// LLCOptions configure the PTX back end.
type LLCOptions struct {
	Path       string // explicit llc (--llc); empty: search
	MCPU       string // default sm_90a
	PTXVersion int    // 0: llc's default
	OptLevel   int    // 0..3, default 3
	Libdevice  string // explicit libdevice (--libdevice); empty: FindLibdevice searches
}

// FindLLC locates llc: the explicit path, then $TMAC_LLC, then llc-22,
// /usr/lib/llvm-22/bin/llc, then llc on PATH.
func FindLLC(explicit string) (string, error) {
	if explicit != "" {
		return checkExecutable(explicit)
	}
	if env := os.Getenv("TMAC_LLC"); env != "" {
		return checkExecutable(env)
	}
	for _, c := range []string{"llc-22", "/usr/lib/llvm-22/bin/llc", "llc"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("llc not found: install LLVM 22 (Debian: apt-get install llvm-22), or point --llc or $TMAC_LLC at an llc with the NVPTX target")
}

func checkExecutable(p string) (string, error) {
	full, err := exec.LookPath(p)
	if err != nil {
		return "", fmt.Errorf("llc '%s' is not an executable: %v", p, err)
	}
	return full, nil
}

var versionRE = regexp.MustCompile(`LLVM version (\d+)\.`)

// CheckLLC verifies that llc is LLVM 20 or newer and has the NVPTX target,
// returning its major version.
func CheckLLC(path string) (int, error) {
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("running '%s --version' failed: %v", path, err)
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("cannot read the LLVM version from '%s --version'", path)
	}
	major, _ := strconv.Atoi(string(m[1]))
	if major < 20 {
		return major, fmt.Errorf("'%s' is LLVM %d; tmac needs LLVM 20 or newer (22 recommended) for the Hopper intrinsics", path, major)
	}
	if !bytes.Contains(out, []byte("nvptx64")) {
		return major, fmt.Errorf("'%s' was built without the NVPTX target", path)
	}
	return major, nil
}

// CompilePTX runs llc on LLVM IR text and returns the PTX. A module that
// declares libdevice functions is linked with libdevice first (see
// linkLibdevice).
func CompilePTX(llvmIR string, o LLCOptions) (string, error) {
	path, err := FindLLC(o.Path)
	if err != nil {
		return "", err
	}
	var libdevice string
	if calls := LibdeviceCalls(llvmIR); len(calls) > 0 {
		if libdevice, err = FindLibdevice(o.Libdevice); err != nil {
			return "", fmt.Errorf("the kernels call %s from libdevice: %v", calls[0], err)
		}
	}
	// The version check (an extra llc process, 10-20 ms of start-up) runs
	// while llc compiles; its verdict comes first, so an unsuitable llc
	// is reported as such even when the compilation also failed.
	// Checks that passed are remembered (see checkCache) so later
	// compilations skip it.
	checked := make(chan error, 1)
	key := checkKey(path)
	if key != "" && checkCached(key) {
		checked <- nil
	} else {
		go func() {
			_, err := CheckLLC(path)
			if err == nil && key != "" {
				rememberCheck(key)
			}
			checked <- err
		}()
	}
	out, err := runLLC(path, llvmIR, libdevice, o)
	if cerr := <-checked; cerr != nil {
		return "", cerr
	}
	return out, err
}

// runLLC compiles llvmIR to PTX, linked with the libdevice at that path
// when it is not empty.
func runLLC(path, llvmIR, libdevice string, o LLCOptions) (string, error) {
	dir, err := os.MkdirTemp("", "tmac-llc-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "kernel.ll")
	out := filepath.Join(dir, "kernel.ptx")
	if err := os.WriteFile(in, []byte(llvmIR), 0o600); err != nil {
		return "", err
	}
	mcpu := o.MCPU
	if mcpu == "" {
		mcpu = "sm_90a"
	}
	if libdevice != "" {
		if in, err = linkLibdevice(path, libdevice, in, dir, mcpu); err != nil {
			return "", err
		}
	}
	args := []string{"-march=nvptx64", "-mcpu=" + mcpu, fmt.Sprintf("-O%d", o.OptLevel), in, "-o", out}
	if o.PTXVersion != 0 {
		args = append(args, fmt.Sprintf("-mattr=+ptx%d", o.PTXVersion))
	}
	var stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", &LLCError{Stderr: err.Error(), IR: llvmIR}
	}
	stop := cleanUpOnSignal(cmd, dir)
	err = cmd.Wait()
	stop()
	if err != nil {
		return "", &LLCError{Stderr: stderr.String(), IR: llvmIR}
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	if names := UnknownIntrinsics(string(ptx)); len(names) > 0 {
		what, it := "the intrinsic "+names[0], "it as an external function"
		if len(names) > 1 {
			what, it = "the intrinsics "+strings.Join(names, ", "), "them as external functions"
		}
		return "", fmt.Errorf("llc does not know %s (the PTX declares %s); this llc is too old for the IR tmac produced", what, it)
	}
	if m := externLibdeviceRE.FindStringSubmatch(string(ptx)); m != nil {
		return "", fmt.Errorf("the PTX calls %s, which linking with libdevice (%s) did not define (a tmac bug, or not NVIDIA's libdevice.10.bc)", m[1], libdevice)
	}
	return string(ptx), nil
}

// cleanUpOnSignal makes an interrupt or termination of tmac while llc
// runs stop llc and, once cmd.Wait has returned and the returned function
// is called, remove llc's temporary directory and exit with the usual
// 128+signal status, instead of leaving the directory behind.
func cleanUpOnSignal(cmd *exec.Cmd, dir string) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	got := make(chan os.Signal, 1)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case sig := <-sigs:
			cmd.Process.Kill()
			got <- sig
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-finished
		select {
		case sig := <-got:
			os.RemoveAll(dir)
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			fmt.Fprintf(os.Stderr, "tmac: %v while llc was running: llc stopped, its temporary files removed\n", sig)
			os.Exit(code)
		default:
		}
	}
}

// checkCache is where passed llc checks are remembered: one line per llc,
// its absolute path, size and modification time, so a changed or replaced
// llc is checked again. Empty (no caching) when there is no user cache
// directory or TMAC_NO_LLC_CACHE is set.
func checkCache() string {
	if os.Getenv("TMAC_NO_LLC_CACHE") != "" {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "tmac", "llc-checked")
}

func checkKey(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	st, err := os.Stat(abs)
	if err != nil || strings.ContainsAny(abs, "\n\t") {
		return ""
	}
	return fmt.Sprintf("%s\t%d\t%d", abs, st.Size(), st.ModTime().UnixNano())
}

func checkCached(key string) bool {
	file := checkCache()
	if file == "" {
		return false
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == key {
			return true
		}
	}
	return false
}

// rememberCheck adds key to the cache (keeping the 32 most recent),
// replacing the file atomically; failures are ignored.
func rememberCheck(key string) {
	file := checkCache()
	if file == "" {
		return
	}
	var keep []string
	if data, err := os.ReadFile(file); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line != "" && line != key {
				keep = append(keep, line)
			}
		}
	}
	keep = append(keep, key)
	if len(keep) > 32 {
		keep = keep[len(keep)-32:]
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".llc-checked-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(strings.Join(keep, "\n") + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
	}
}

// externNVVMRE matches the PTX declaration llc writes for a call to an
// llvm.nvvm.* function it has no lowering for, with or without a return
// value: `.extern .func llvm.nvvm.x` or
// `.extern .func  (.param .b32 func_retval0) llvm.nvvm.x`.
var externNVVMRE = regexp.MustCompile(`(?m)^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?(llvm\.nvvm\.[A-Za-z0-9_.$]+)`)

// UnknownIntrinsics lists (in order, without repeats) the llvm.nvvm.*
// intrinsics that PTX text declares as external functions: intrinsics
// the llc that produced it did not know.
func UnknownIntrinsics(ptx string) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range externNVVMRE.FindAllStringSubmatch(ptx, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names
}

// LLCError is llc rejecting the IR; it quotes the offending IR line.
type LLCError struct {
	Stderr string
	IR     string
}

var llLineRE = regexp.MustCompile(`kernel\.ll:(\d+):(\d+)`)

func (e *LLCError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if m := llLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		lines := strings.Split(e.IR, "\n")
		if n >= 1 && n <= len(lines) {
			msg += fmt.Sprintf("\noffending LLVM IR line %d: %s", n, strings.TrimSpace(lines[n-1]))
		}
	}
	return "llc rejected the generated LLVM IR (a tmac bug; please report it):\n" + msg
}
