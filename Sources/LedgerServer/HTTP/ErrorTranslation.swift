import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerImages
import Logging

/// Turns anything a handler throws into the API's error shape: typed errors keep their
/// status, framework errors become `400`/`404`/`413`, and the unexpected becomes a `500`
/// whose details go to the log only.
enum ErrorTranslation {
    static func apiError(for error: any Error) -> APIError? {
        switch error {
        case let error as APIError:
            return error
        case let error as ErrorInAccountLanguage:
            return apiError(for: error.error)
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                return APIError(.notFound, .notFound, "No such endpoint.")
            case .contentTooLarge:
                return APIError(.contentTooLarge, .payloadTooLarge, "The request body is larger than 64 KiB.")
            case .methodNotAllowed:
                return APIError(.methodNotAllowed, .methodNotAllowed, "This endpoint does not accept that method.")
            case .badRequest:
                return APIError(.badRequest, .invalidRequest, "The request body is not valid JSON of the expected shape.")
            case .unsupportedMediaType:
                return APIError(.unsupportedMediaType, .invalidRequest, "Send JSON (Content-Type: application/json).")
            default:
                guard (400..<500).contains(error.status.code) else { return nil }
                return APIError(error.status, .invalidRequest, error.body ?? "The request cannot be served.")
            }
        case let error as IdentityError:
            switch error.code {
            case .invalidCredentials: return APIError(.unauthorized, .init("invalid_credentials"), error.message)
            case .invalidCredential: return APIError(.unauthorized, .init("invalid_credential"), error.message)
            case .sessionExpired:
                return APIError(
                    .unauthorized, .init("session_expired"), error.message,
                    extra: ["last_method": error.lastMethod.map(JSONValue.string) ?? .null])
            case .linkExpired: return APIError(.gone, .init("link_expired"), error.message)
            case .noAccount: return APIError(.notFound, .init("no_account"), error.message)
            case .notFound: return APIError(.notFound, .notFound, error.message)
            case .signInRequired: return AuthController.unauthorized
            case .accountDeleted: return APIError(.gone, .init("account_deleted"), error.message)
            case .accountDisabled: return APIError(.forbidden, .init("account_disabled"), error.message)
            case .exportNotAllowed: return APIError(.forbidden, .init(error.code.rawValue), error.message)
            case .reauthRequired: return APIError(.forbidden, .init("reauth_required"), error.message)
            case .invalidToken: return APIError(.unauthorized, .init("invalid_token"), error.message)
            case .codeExpired: return APIError(.gone, .init("code_expired"), error.message)
            case .incorrectCode:
                // A TOTP code has no count of its own (the account's sign-in limit counts it).
                return APIError(
                    .unauthorized, .init("incorrect_code"), error.message,
                    extra: error.attemptsRemaining.map { ["attempts_remaining": .int(Int64($0))] } ?? [:])
            case .mfaExpired: return APIError(.gone, .init("mfa_expired"), error.message)
            case .newPasswordRequired:
                return apiError(
                    for: AccountService.ValidationFailure(problems: [.init(field: "new_password", code: "required", message: error.message)]
                    ))
            case .rateLimited:
                let retryAfter = error.retryAfter ?? 1
                return APIError(
                    .tooManyRequests, .init("rate_limited"), error.message, extra: ["retry_after": .int(Int64(retryAfter))],
                    headers: [.retryAfter: String(retryAfter)])
            default: return APIError(.conflict, .init(error.code.rawValue), error.message)
            }
        case let taken as ClaimTaken:
            switch taken.claim {
            case .email: return APIError(.conflict, .init("email_taken"), "This email is already in use. Log in instead.")
            case .handle: return APIError(.conflict, .init("handle_taken"), "This handle is taken.")
            case .phone: return APIError(.conflict, .init("phone_taken"), "This number is already in use by another account.")
            case .apple, .google:
                return APIError(.conflict, .init("provider_in_use"), "This account is already connected to another account.")
            case .passkey:
                return APIError(.conflict, .init("passkey_exists"), IdentityError.passkeyExists.message)
            }
        case let required as LinkRequired:
            return APIError(
                .conflict, .init("link_required"),
                "An account with this email already exists. Sign in to it to connect \(required.provider.displayName).",
                extra: [
                    "link_token": .string(required.linkToken), "email_hint": .string(required.emailHint),
                    "methods": .array(required.methods.map { .string($0.rawValue) }),
                ])
        case let refused as StaffError:
            switch refused.code {
            case .invalidCredential: return APIError(.unauthorized, .init("invalid_credential"), refused.message)
            case .invitationExpired: return APIError(.gone, .init("invitation_expired"), refused.message)
            case .sessionEnded: return APIError(.unauthorized, .init("session_ended"), refused.message)
            case .noStaff: return APIError(.notFound, .init("no_staff"), refused.message)
            default: return APIError(.conflict, .init(refused.code.rawValue), refused.message)
            }
        case let blocked as DeletionBlocked:
            return APIError(
                .conflict, .init("deletion_blocked"), "Clear what still needs you before deleting your account.",
                extra: ["blockers": .array(blocked.blockers.map(DeletionController.blockerBody))])
        case let invalid as InvalidAppleNotification:
            if invalid.isUnavailable {
                return APIError(
                    .serviceUnavailable, .serviceUnavailable, "Apple notifications cannot be checked now. Try again later.",
                    headers: [.retryAfter: "60"])
            }
            return APIError(.badRequest, .init("invalid_notification"), "The notification could not be verified.")
        case is InvalidIdentityToken:
            return APIError(.unauthorized, .init("invalid_token"), "The sign-in could not be verified. Try again.")
        case let failure as AccountService.ValidationFailure:
            let errors = failure.problems.map { problem in
                JSONValue.object([
                    "field": .string(problem.field), "code": .string(problem.code), "message": .string(problem.message),
                ])
            }
            return APIError(.unprocessableContent, .validationFailed, "Some fields need attention.", extra: ["errors": .array(errors)])
        case let throttled as TooManyAttempts:
            return APIError(
                .tooManyRequests, .init("too_many_attempts"), "Too many attempts. Try again later.",
                extra: ["retry_after": .int(Int64(throttled.retryAfter))],
                headers: [.retryAfter: String(throttled.retryAfter)])
        case let refused as AvatarImageError:
            switch refused.code {
            case .unsupported:
                return APIError(
                    .unsupportedMediaType, .unsupportedImage, "Choose a JPEG, PNG or WebP picture of at most 8000 × 8000 pixels.")
            case .tooLarge: return AvatarController.tooLarge
            case .busy, .unavailable:
                return APIError(
                    .serviceUnavailable, .serviceUnavailable, "Pictures cannot be taken right now. Try again shortly.",
                    headers: [.retryAfter: "1"])
            }
        case PasswordHasherError.overloaded:
            return APIError(
                .serviceUnavailable, .serviceUnavailable, "Too many sign-ins at once. Try again shortly.",
                headers: [.retryAfter: "1"])
        case is DecodingError:
            return APIError(.badRequest, .invalidRequest, "The request body is not valid JSON of the expected shape.")
        case let failure as any TemporaryUnavailability where failure.isTemporarilyUnavailable:
            return APIError(
                .serviceUnavailable, failure.isSaturated ? .serviceUnavailable : .unavailable,
                "The service is temporarily unavailable. Try again shortly.",
                headers: [.retryAfter: "1"])
        default:
            return nil
        }
    }

    /// The rules answered (openapi.yaml) as a top-level `422` of their own when they are the only one
    /// broken: `invalid_email` "Enter a valid email address." and `invalid_phone` "Enter a
    /// valid phone number.". Every other `422` is `validation_failed` with its `errors`.
    static let topLevelRules: Set<String> = ["invalid_email", "invalid_phone"]

    /// Answers a lone `invalid_email` or `invalid_phone` as the top-level `422` openapi.yaml names.
    static func singleRule<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as AccountService.ValidationFailure
            where failure.problems.count == 1 && topLevelRules.contains(failure.problems[0].code)
        {
            let problem = failure.problems[0]
            throw APIError(.unprocessableContent, .init(problem.code), problem.message)
        }
    }

    /// The response for `error`, its message in the signed-in account's language (`SessionMiddleware`),
    /// else the request's (`APIError.language(for:fallback:)`).
    static func response(
        for error: any Error, request: Request, context: LedgerRequestContext, defaultLanguage: Language = .en
    ) throws -> Response {
        let language = (error as? ErrorInAccountLanguage)?.language ?? APIError.language(for: request, fallback: defaultLanguage)
        let apiError = apiError(for: error)
        if apiError == nil {
            context.logger.error("unhandled error", metadata: ["error_type": "\(type(of: error))", "error": "\(error)"])
        }
        var response = try (apiError ?? APIError(.internalServerError, .internalError, "Something went wrong on our side."))
            .inLanguage(language).response(from: request, context: context)
        // The message follows the language: no shared cache may hand one language's to another.
        response.headers[.contentLanguage] = language.rawValue
        response.headers[.vary] = "Accept-Language"
        return response
    }
}
