//! The `redline` binary: a thin shim over the library.

fn main() {
    let status = redline::cli::main();
    std::process::exit(status.code());
}

/// C's `ldexp` (`x · 2^exp`, rounded once), defined here so that the binary needs nothing from
/// libm: the compiler turns a power-of-two scaling in syntect's colour blending into a call of
/// `ldexp`, the only libm symbol the binary would otherwise import, and with it defined here the
/// linker (`--as-needed`) drops `libm.so.6`, which the loader would open, map and relocate at
/// every start (README, Performance, "Process start-up"). The `libm` crate's `ldexp` is musl's;
/// `tests::ldexp_matches_the_c_library` checks it against glibc's, bit for bit.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
pub extern "C" fn ldexp(x: f64, exp: std::ffi::c_int) -> f64 {
    libm::ldexp(x, exp)
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use std::ffi::c_int;

    /// glibc's `ldexp`, looked up in libm itself (in this test binary the name `ldexp` is ours).
    fn c_ldexp() -> extern "C" fn(f64, c_int) -> f64 {
        // SAFETY: dlopen and dlsym with NUL-terminated names; the symbol, when found, is C's
        // `double ldexp(double, int)`, which is the type it is transmuted to.
        unsafe {
            let lib = libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW);
            assert!(!lib.is_null(), "libm.so.6 not found");
            let sym = libc::dlsym(lib, c"ldexp".as_ptr());
            assert!(!sym.is_null(), "ldexp not in libm.so.6");
            std::mem::transmute::<*mut libc::c_void, extern "C" fn(f64, c_int) -> f64>(sym)
        }
    }

    #[test]
    fn ldexp_matches_the_c_library() {
        let theirs = c_ldexp();
        assert_ne!(
            theirs as usize,
            super::ldexp as extern "C" fn(f64, c_int) -> f64 as usize
        );
        let mut xs = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::MAX,
            -f64::MAX,
            f64::EPSILON,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            255.0 / 256.0,
            0.1,
            1e300,
            -1e-300,
        ];
        // Pseudo-random doubles over every exponent (a fixed xorshift, so runs repeat).
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..4000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            xs.push(f64::from_bits(s));
        }
        let mut exps: Vec<c_int> = (-1100..=1100).step_by(7).collect();
        exps.extend([
            c_int::MIN,
            c_int::MIN + 1,
            -2098,
            -1075,
            -1074,
            -1023,
            -1022,
            -1,
            0,
            1,
            1023,
            1024,
            2098,
            c_int::MAX - 1,
            c_int::MAX,
        ]);
        for &x in &xs {
            for &e in &exps {
                let (ours, c) = (super::ldexp(x, e), theirs(x, e));
                assert!(
                    ours.to_bits() == c.to_bits() || (ours.is_nan() && c.is_nan()),
                    "ldexp({x:e} [{:#x}], {e}) = {ours:e}, glibc {c:e}",
                    x.to_bits()
                );
            }
        }
    }
}
