import FeliCa

// Swift 6.0's `#expect(throws:)` does not return the error it caught (6.1's does): a test
// that looks into the error takes it from here, which works with both.

/// The FeliCaError `body` throws; nil when it returns, or throws another kind of error.
func thrownError<T>(_ body: () throws -> T) -> FeliCaError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? FeliCaError
    }
}

/// The FeliCaError `body` throws; nil when it returns, or throws another kind of error.
func thrownError<T>(_ body: () async throws -> T) async -> FeliCaError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? FeliCaError
    }
}
