import FeliCaCards
import FeliCaHistory

/// What `watch --save` does with each card read: saves it, and when another process holds
/// the database past the busy timeout, says so and keeps the reading in memory instead of
/// ending the watch. Kept readings are saved, oldest first, before the next card's reading
/// (each tap waits for the lock at most once), and tried once more when the watch ends.
///
/// A kept reading that a newer reading of the same card covers (``Reading/covers(_:)``) is
/// dropped for it, so a card tapped again and again while the lock is held is kept once.
final class WatchSaver {
    let store: HistoryStore
    private let console: Console
    /// Readings not saved yet, oldest first.
    private(set) var backlog: [Reading] = []

    init(store: HistoryStore, console: Console) {
        self.store = store
        self.console = console
    }

    /// Saves the backlog, then this card's reading. nil when the reading could not be saved
    /// (said on stderr): incomplete (dropped), or the database locked (kept for later).
    /// Any other failure of the database (a full disk, a damaged file) is thrown: it ends
    /// the watch, as no later tap could be saved either.
    func save(_ report: CardReport, device: String?) throws(HistoryError) -> HistoryStore.SaveResult? {
        let reading: Reading
        do {
            reading = try Reading(report: report, device: device, readAt: HistoryOptions.now())
        } catch {
            console.diag("card \(report.idm) not saved: \(error.reason)")
            return nil
        }
        guard try flush() else {
            keep(reading, because: nil)
            return nil
        }
        do {
            return try HistoryOptions.save(reading, to: store, console: console)
        } catch where error.code == .busy {
            keep(reading, because: error)
            return nil
        }
    }

    /// Saves the kept readings, oldest first; false when the database is still locked.
    func flush() throws(HistoryError) -> Bool {
        while let first = backlog.first {
            do {
                _ = try HistoryOptions.save(first, to: store, console: console)
            } catch where error.code == .busy {
                return false
            }
            backlog.removeFirst()
            console.diag("card \(first.card): the reading of \(first.readAt) that could not be saved is saved now")
        }
        return true
    }

    /// When the watch ends: one more try; false (after naming each card) when readings
    /// stay unsaved.
    func finish() -> Bool {
        let why: String
        do {
            if try flush() { return true }
            why = "the history database \(store.path) was still locked by another process when watch ended"
        } catch {
            why = error.reason
        }
        for r in backlog { console.diag("card \(r.card) (read at \(r.readAt)) not saved: \(why)") }
        return false
    }

    private func keep(_ reading: Reading, because error: HistoryError?) {
        backlog.removeAll { reading.covers($0) }
        backlog.append(reading)
        let waiting = backlog.count == 1 ? "" : " (\(backlog.count) readings waiting)"
        console.diag("card \(reading.card) not saved: "
            + (error?.reason ?? "the history database \(store.path) is still locked by another process")
            + "; its reading is kept and saved with the next card read\(waiting)")
    }
}
