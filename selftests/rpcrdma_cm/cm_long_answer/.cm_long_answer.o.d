/work/wt21/selftests/rpcrdma_cm/cm_long_answer/cm_long_answer.o: /work/wt21/selftests/rpcrdma_cm/cm_long_answer/cm_long_answer.rs /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libcore.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libcompiler_builtins.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libkernel.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libffi.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libmacros.so /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libbindings.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libuapi.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libbuild_error.rmeta

/work/wt21/selftests/rpcrdma_cm/cm_long_answer/.cm_long_answer.o.d: /work/wt21/selftests/rpcrdma_cm/cm_long_answer/cm_long_answer.rs /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libcore.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libcompiler_builtins.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libkernel.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libffi.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libmacros.so /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libbindings.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libuapi.rmeta /root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libbuild_error.rmeta

/work/wt21/selftests/rpcrdma_cm/cm_long_answer/cm_long_answer.rs:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libcore.rmeta:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libcompiler_builtins.rmeta:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libkernel.rmeta:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libffi.rmeta:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libmacros.so:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libbindings.rmeta:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libuapi.rmeta:
/root/.cache/rpcrdma_cm/kernel-6.12-default-24f5b9aaa3b20e12/linux/rust/libbuild_error.rmeta:
