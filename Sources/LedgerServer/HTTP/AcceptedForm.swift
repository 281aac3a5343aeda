import HTTPTypes
import Hummingbird

/// Content negotiation by `Accept` (RFC 9110 §12.5.1), for the few media types an endpoint can
/// answer in: a media type is chosen when the header names it with a non-zero `q` higher than
/// the plain form's; a tie (a generated client lists every form at `q=1`), an absent, unknown or
/// wildcard `Accept` keeps the plain form. Where the plain form is a transport the other form
/// travels in (SSE carrying CloudEvents: a client names both), `winsTies` lets a tie choose it.
enum AcceptedForm {
    /// Whether `request` asks for `mediaType` over `plain`.
    static func prefers(_ mediaType: String, over plain: String, in request: Request, winsTies: Bool = false) -> Bool {
        prefers(mediaType, over: plain, accept: request.headers[.accept], winsTies: winsTies)
    }

    /// Whether an `Accept` header's value asks for `mediaType` over `plain`.
    static func prefers(_ mediaType: String, over plain: String, accept: String?, winsTies: Bool = false) -> Bool {
        guard let header = accept else { return false }
        let ranges = header.split(separator: ",").map(Self.range)
        guard let wanted = ranges.first(where: { $0.type == mediaType })?.quality, wanted > 0 else { return false }
        let plainQuality = ranges.first(where: { $0.type == plain })?.quality ?? 0
        return wanted > plainQuality || (winsTies && wanted == plainQuality)
    }

    /// `type/subtype;q=0.5` → (`type/subtype`, 0.5); no `q` is 1.
    static func range(_ text: Substring) -> (type: String, quality: Double) {
        let parts = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        var quality = 1.0
        for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
            quality = Double(parameter.dropFirst(2)) ?? 0
        }
        return ((parts.first ?? "").lowercased(), quality)
    }
}
