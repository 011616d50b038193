// Checked by ../mapa.tma (messages as mlir-opt 22 gives them).
func.func @wrong_space(%p: !llvm.ptr<3>, %r: i32) {
  // expected-error @+1 {{'nvvm.mapa' op failed to verify that Valid address-space check(or mapping) for mapa Op}}
  %0 = nvvm.mapa %p, %r : !llvm.ptr<3> -> !llvm.ptr
  return
}

// -----

func.func @global(%p: !llvm.ptr<1>, %r: i32) {
  // expected-error @+1 {{'nvvm.mapa' op operand #0 must be LLVM pointer in address space 0 or LLVM pointer in address space 3, but got '!llvm.ptr<1>'}}
  %0 = nvvm.mapa %p, %r : !llvm.ptr<1> -> !llvm.ptr<1>
  return
}
