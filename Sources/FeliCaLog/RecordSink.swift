/// Where an export writes kept records: CSV (``ExpenseCSV``) or an OFX statement
/// (``OFXStatement``). The same records, gaps and missing parts go to either; each says
/// in ``incomplete`` what the output lacks.
public protocol RecordSink {
    /// One record; records come oldest first.
    mutating func add(_ r: KeptRecord) throws
    /// Records that rolled off the card before it was read; `date` is where the gap sits
    /// among the records.
    mutating func addGap(_ gap: HistoryStore.Gap, date: String) throws
    /// What could not be had at all: `type` is `not decoded` or `unreadable`.
    mutating func addMissing(type: String, card: String, purse: String, detail: String) throws
    /// Everything missing from the output, in words.
    var incomplete: [String] { get }
}

extension ExpenseCSV: RecordSink {}
extension OFXStatement: RecordSink {}
