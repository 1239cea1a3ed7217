#!/bin/sh
# Runs an aarch64 program under qemu-user. OCTET_QEMU_CPU picks the CPU model: "max" has every NEON tier
# (dot product, i8mm); "cortex-a53" has plain NEON only, so the fallback tiers run too.
exec qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu "${OCTET_QEMU_CPU:-max}" "$@"
