#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    barrage_fuzz::h1_response(data);
});
