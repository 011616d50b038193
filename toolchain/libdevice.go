package toolchain

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// libdevice is NVIDIA's bitcode math library (libdevice.10.bc): the
// accurate f32 and f64 transcendentals (__nv_logf, __nv_tanh, ...) that
// clang's CUDA, Triton and upstream MLIR link into their kernels. NVIDIA's
// license keeps it out of this repository: it comes with the CUDA toolkit,
// and scripts/install-deps.sh extracts it from Debian's non-free
// nvidia-cuda-toolkit package. A module that declares __nv_ functions is
// linked with it before llc runs; other modules compile as before.

// LibdeviceFile is the name of the library file.
const LibdeviceFile = "libdevice.10.bc"

// LibdeviceDirs returns the directories FindLibdevice searches after the
// explicit path and $TMAC_LIBDEVICE, in order: the CUDA toolkit
// ($CUDA_HOME, /usr/local/cuda), Debian's nvidia-cuda-toolkit, and where
// scripts/install-deps.sh puts it (/usr/local/share/tmac as root,
// $XDG_DATA_HOME/tmac or ~/.local/share/tmac otherwise).
func LibdeviceDirs() []string {
	var dirs []string
	if h := os.Getenv("CUDA_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "nvvm", "libdevice"))
	}
	dirs = append(dirs, "/usr/local/cuda/nvvm/libdevice", "/usr/lib/nvidia-cuda-toolkit/libdevice", "/usr/local/share/tmac")
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "tmac"))
	} else if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".local", "share", "tmac"))
	}
	return dirs
}

// LibdeviceHelp says how to get libdevice, for error messages.
const LibdeviceHelp = "run scripts/install-deps.sh (it extracts libdevice.10.bc from Debian's nvidia-cuda-toolkit package), install the CUDA toolkit, or point --libdevice or $TMAC_LIBDEVICE at libdevice.10.bc"

// FindLibdevice locates libdevice: the explicit path (--libdevice), then
// $TMAC_LIBDEVICE, then LibdeviceDirs. An explicit path or the variable may
// name the file or a directory holding it; when given, nothing else is
// searched.
func FindLibdevice(explicit string) (string, error) {
	for _, c := range []struct{ path, what string }{{explicit, "--libdevice"}, {os.Getenv("TMAC_LIBDEVICE"), "$TMAC_LIBDEVICE"}} {
		if c.path == "" {
			continue
		}
		p := c.path
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, LibdeviceFile)
		}
		if err := checkBitcode(p); err != nil {
			return "", fmt.Errorf("libdevice from %s: %v", c.what, err)
		}
		return p, nil
	}
	return searchLibdevice(LibdeviceDirs())
}

// searchLibdevice returns the first libdevice in dirs.
func searchLibdevice(dirs []string) (string, error) {
	for _, d := range dirs {
		p := filepath.Join(d, LibdeviceFile)
		if _, err := os.Stat(p); err == nil {
			if err := checkBitcode(p); err != nil {
				return "", err
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("NVIDIA's libdevice (%s) was not found in %s: %s", LibdeviceFile, strings.Join(dirs, ", "), LibdeviceHelp)
}

// checkBitcode reports whether p is a readable LLVM bitcode file (raw, or
// in the wrapper header).
func checkBitcode(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var magic [4]byte
	if n, _ := f.Read(magic[:]); n < 4 || (string(magic[:]) != "BC\xc0\xde" && string(magic[:]) != "\xde\xc0\x17\x0b") {
		return fmt.Errorf("'%s' is not an LLVM bitcode file", p)
	}
	return nil
}

// libdeviceDeclRE matches the declaration of a libdevice function in LLVM
// IR text (llir writes `declare float @__nv_logf(float %p0)`).
var libdeviceDeclRE = regexp.MustCompile(`(?m)^declare\b[^@\n]*@(__nv_[A-Za-z0-9_]+)\(`)

// LibdeviceCalls lists, in order, the libdevice functions an LLVM module
// declares: what linking it with libdevice must define.
func LibdeviceCalls(llvmIR string) []string {
	var names []string
	for _, m := range libdeviceDeclRE.FindAllStringSubmatch(llvmIR, -1) {
		names = append(names, m[1])
	}
	return names
}

// externLibdeviceRE matches PTX's declaration of a function left
// undefined after linking: a libdevice function, or the __nvvm_reflect
// query that NVVMReflect should have answered.
var externLibdeviceRE = regexp.MustCompile(`(?m)^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?((?:__nv_|__nvvm_)[A-Za-z0-9_]+)`)

// findLLVMTool locates an LLVM tool of llc's version: in the directory llc
// resolves to (/usr/bin/llc-22 is /usr/lib/llvm-22/bin/llc), beside llc
// with llc's suffix (llc-22: llvm-link-22), then name-22,
// /usr/lib/llvm-22/bin/name and name on PATH.
func findLLVMTool(name, llc string) (string, error) {
	var beside []string
	if real, err := filepath.EvalSymlinks(llc); err == nil {
		beside = append(beside, filepath.Join(filepath.Dir(real), name))
	}
	suffix := strings.TrimPrefix(filepath.Base(llc), "llc")
	beside = append(beside, filepath.Join(filepath.Dir(llc), name+suffix))
	for _, p := range beside {
		if isExecutable(p) {
			return p, nil
		}
	}
	for _, c := range []string{name + "-22", "/usr/lib/llvm-22/bin/" + name, name} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found beside %s or as %s-22, /usr/lib/llvm-22/bin/%s or %s: install LLVM 22's tools (Debian: apt-get install llvm-22)", name, llc, name, name, name)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// linkLibdevice links the module in with libdevice in dir and returns the
// bitcode llc compiles: llvm-link --only-needed --internalize takes the
// functions the module calls (and what they call) as internal functions;
// opt inlines them (libdevice marks them alwaysinline, and llc has no
// inliner), answers their __nvvm_reflect queries for the target (FTZ off:
// the module's nvvm-reflect-ftz flag is 0) and drops what is left unused.
// The kernels are otherwise unchanged; device functions nothing calls are
// gone (llvm-link moves only what is used or visible), as dead code.
func linkLibdevice(llc, libdevice, in, dir, mcpu string) (string, error) {
	link, err := findLLVMTool("llvm-link", llc)
	if err != nil {
		return "", err
	}
	opt, err := findLLVMTool("opt", llc)
	if err != nil {
		return "", err
	}
	linked := filepath.Join(dir, "linked.bc")
	if err := runTool(link, "--only-needed", "--internalize", in, libdevice, "-o", linked); err != nil {
		return "", fmt.Errorf("linking libdevice (%s) failed: %v", libdevice, err)
	}
	out := filepath.Join(dir, "inlined.bc")
	if err := runTool(opt, "-mcpu="+mcpu, "-passes=always-inline,nvvm-reflect,globaldce", linked, "-o", out); err != nil {
		return "", fmt.Errorf("inlining libdevice's functions failed: %v", err)
	}
	return out, nil
}

// runTool runs an LLVM tool, returning its standard error in the error.
func runTool(path string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command(path, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s: %s", filepath.Base(path), msg)
	}
	return nil
}
