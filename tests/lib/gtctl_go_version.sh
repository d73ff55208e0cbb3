#!/bin/sh
# gtctl_go_version.sh: gotracectl with `--go-version $GT_GO_VERSION` added
# to every `record` that names no version itself.  tests/integration/lib.sh
# makes it $GTCTL when GT_GO_VERSION is set (GT_GO_VERSION=1.23 runs a
# recording test on Go 1.23 traces); GT_REAL_GTCTL is the real binary.
# exec keeps the pid: tests signal and wait for $GTCTL's process.
if [ "${1:-}" = record ]; then
	shift
	case " $* " in
	*" --go-version"*) exec "$GT_REAL_GTCTL" record "$@" ;;
	esac
	exec "$GT_REAL_GTCTL" record --go-version "$GT_GO_VERSION" "$@"
fi
exec "$GT_REAL_GTCTL" "$@"
