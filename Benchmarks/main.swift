// Benchmarks print figures; run with `swift run -c release Benchmarks [section ...]`.
// Sections: codec, session, libnfc, order, pcsc, cards.
print("# felica benchmarks (release build expected; debug figures are meaningless)")
codecBenchmarks()
await sessionBenchmarks()
await libnfcBenchmarks()
await orderBenchmarks()
await pcscBenchmarks()
await cardBenchmarks()
