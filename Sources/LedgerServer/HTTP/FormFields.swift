import Foundation

/// The fields of an `application/x-www-form-urlencoded` body (the link pages' forms); a field
/// given twice keeps its first value.
enum FormFields {
    static func parse(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            guard let name = parts.first, !name.isEmpty, fields[name] == nil else { continue }
            fields[name] = parts.count == 2 ? parts[1] : ""
        }
        return fields
    }
}
