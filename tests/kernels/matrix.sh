# matrix.sh: the kernels `make check-kernels` boots (sourced).  Each entry:
# name, CPU architecture, Debian suite, and the meta package naming its
# current kernel image.  Users run these (docs/testing.md).
# Debian 11 from its security suite: what its users run today (5.10 LTS).
GT_KERNELS_X86="deb11-5.10 deb12-6.1 deb12bp-6.12"
GT_KERNELS_ARM64="deb11-5.10-arm64 deb12-6.1-arm64"

# gt_kernel_entry NAME: sets GT_K_ARCH (Debian arch), GT_K_SUITE, GT_K_META.
gt_kernel_entry() {
	case $1 in
	deb11-5.10)      GT_K_ARCH=amd64 GT_K_SUITE=bullseye-security  GT_K_META=linux-image-amd64 ;;
	deb12-6.1)       GT_K_ARCH=amd64 GT_K_SUITE=bookworm           GT_K_META=linux-image-amd64 ;;
	deb12bp-6.12)    GT_K_ARCH=amd64 GT_K_SUITE=bookworm-backports GT_K_META=linux-image-amd64 ;;
	deb11-5.10-arm64) GT_K_ARCH=arm64 GT_K_SUITE=bullseye          GT_K_META=linux-image-arm64 ;;
	deb12-6.1-arm64) GT_K_ARCH=arm64 GT_K_SUITE=bookworm           GT_K_META=linux-image-arm64 ;;
	# not in the matrix: vmlinux/gen-arm64.sh takes its BTF
	deb12bp-6.12-arm64) GT_K_ARCH=arm64 GT_K_SUITE=bookworm-backports GT_K_META=linux-image-arm64 ;;
	*) echo "kernels: unknown kernel '$1' (known: $GT_KERNELS_X86 $GT_KERNELS_ARM64)" >&2
	   return 1 ;;
	esac
}
