// Benchmarks print figures; run with `swift run -c release Benchmarks [section ...]`.
// Sections: codec, session (and those the transports and ordering work add).
print("# felica benchmarks (release build expected; debug figures are meaningless)")
codecBenchmarks()
await sessionBenchmarks()
