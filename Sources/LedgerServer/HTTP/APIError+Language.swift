import Foundation
import HTTPTypes
import Hummingbird
import LedgerIdentity

extension APIError {
    /// This error with its `message`, and each `errors[].message`, in `language`
    /// (`ErrorMessages`); the code, the fields and every other value as they were.
    func inLanguage(_ language: Language, messages: ErrorMessages = .builtIn) -> APIError {
        guard language != .en else { return self }
        var translated = APIError(status, code, messages.translate(message, to: language), extra: extra, headers: headers)
        if case .array(let problems)? = extra["errors"] {
            translated.extra["errors"] = .array(
                problems.map { problem in
                    guard case .object(var fields) = problem, case .string(let text)? = fields["message"] else { return problem }
                    fields["message"] = .string(messages.translate(text, to: language))
                    return .object(fields)
                })
        }
        return translated
    }

    /// The language a request's error is written in: the one its `Accept-Language` prefers
    /// most among the service's, else `fallback` (`LEDGER_DEFAULT_LOCALE`).
    static func language(for request: Request, fallback: Language) -> Language {
        Language(tag: AcceptLanguage.preferredSupported(request.headers[.acceptLanguage])) ?? fallback
    }
}
