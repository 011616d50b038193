# Counts the instructions of a fused GELU epilogue in PTX (issue 18): from
# the first min.NaN.f32 (GELU's clamp of |y|) to the next wgmma.wait_group
# (the store's), the branches, clamps, fma, ex2 and selects.
/min\.NaN\.f32/ { on = 1 }
on && /wgmma\.wait_group/ { exit }
on {
	if (/bra/) b++
	if (/min\.NaN\.f32/) m++
	if (/fma\.rn\.f32/) f++
	if (/ex2\.approx\.f32/) e++
	if (/selp\.f32/) s++
}
END { print "gelu: bra", b + 0, "min", m + 0, "fma", f + 0, "ex2", e + 0, "selp", s + 0 }
