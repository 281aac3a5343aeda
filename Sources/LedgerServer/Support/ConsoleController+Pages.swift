import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerEvents
import LedgerIdentity
import LedgerWebAuthn

/// The console's pages of one account: search results, the account, a confirmation, and the
/// change it confirms. Each look and each change goes through `SupportDesk`, as the admin API's.
extension ConsoleController {
    func results(_ request: Request, _ staff: StaffConsole.StaffSession) async throws -> Response {
        let by = request.uri.queryParameters["by"].map(String.init) ?? "email"
        let value = (request.uri.queryParameters["q"].map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
        let query: SupportQuery
        switch by {
        case "phone": query = .phone(value)
        case "user_id": query = .userID(value)
        case "handle": query = .handle(value)
        default: query = .email(value)
        }
        let found = try await desk.search(query, actor: staff.actor)
        let accounts = found.map { summary in
            [
                "account_id": summary.state.accountID.lowercased, "label": Self.label(summary), "status": summary.status.rawValue,
                "user_id": PublicUserID(accountID: summary.state.accountID).description,
                "created": summary.state.createdAt.map(Self.readable) ?? "—",
            ]
        }
        let label = ["email": "email", "phone": "phone number", "user_id": "user id", "handle": "handle"][by] ?? "value"
        return pages.render(
            "Search", ["results": ["count": found.count, "none": found.isEmpty, "by": label, "accounts": accounts]], staff: staff)
    }

    func accountPage(_ request: Request, _ context: LedgerRequestContext, _ staff: StaffConsole.StaffSession) async throws -> Response {
        let accountID = try SupportController.accountID(context)
        let summary = try await desk.summary(accountID, actor: staff.actor)
        let state = summary.state
        let base = "/console/accounts/\(accountID.lowercased)"
        let admin = staff.role == .admin && summary.status != .deletionScheduled && summary.status != .purged
        var methods: [[String: String]] = []
        // A removal is offered only while another way in would remain (the desk's rule refuses it otherwise).
        let removable = admin && state.signInMethods.count + max(0, summary.passkeys.count - 1) > 1
        func method(_ name: String, _ detail: String, remove: String?) {
            var row = ["name": name, "detail": detail]
            if removable, let remove { row["remove"] = remove }
            methods.append(row)
        }
        if let email = state.email {
            method(
                "Email", email + (state.emailVerified ? " · verified" : " · not verified") + (state.hasPassword ? " · password" : ""),
                remove: "\(base)/remove-method?method=email")
        }
        if let phone = state.phone { method("Phone", phone, remove: "\(base)/remove-method?method=phone") }
        if state.providerSubjects[.apple] != nil { method("Apple", "connected", remove: "\(base)/remove-method?method=apple") }
        if state.providerSubjects[.google] != nil { method("Google", "connected", remove: "\(base)/remove-method?method=google") }
        for passkey in summary.passkeys {
            method(
                "Passkey · \(passkey.name)", "added \(Self.readable(passkey.createdAt))",
                remove: "\(base)/remove-passkey?passkey_id=\(passkey.id.lowercased)")
        }
        var actions: [[String: String]] = []
        if summary.status == .active || summary.status == .disabled {
            func action(_ kind: ConsoleAction, _ label: String) {
                guard !kind.needsAdmin || staff.role == .admin else { return }
                actions.append([
                    "href": "\(base)/\(kind.rawValue)", "label": label, "tone": kind.tone.isEmpty ? "quiet" : kind.tone,
                    "id": kind.rawValue,
                ])
            }
            action(.signOut, "Sign out everywhere")
            if state.emailVerified { action(.passwordReset, "Send reset link") }
            action(summary.status == .disabled ? .enable : .disable, summary.status == .disabled ? "Enable" : "Disable")
        }
        var content: [String: Any] = [
            "account_id": accountID.lowercased, "label": Self.label(summary), "status": summary.status.rawValue,
            "user_id": PublicUserID(accountID: accountID).description, "created": state.createdAt.map(Self.readable) ?? "—",
            "last_sign_in": summary.lastSignInAt.map(Self.readable) ?? "—", "methods": methods,
            "two_factor": state.isTOTPEnabled ? "on (\(state.recoveryCodeHashes.count) recovery codes left)" : "off",
            "session_count": summary.liveSessions.count,
            "sessions": summary.liveSessions.map {
                ["device": $0.device ?? "Unknown device", "method": $0.method, "last_used": Self.readable($0.lastUsedAt)]
            },
            "holds": summary.holds.map { ["kind": $0.kind.rawValue, "ref": $0.ref, "starts": $0.startsAt.map(Self.readable) ?? ""] },
            "actions": actions,
        ]
        if admin && state.isTOTPEnabled { content["reset_two_factor"] = "\(base)/\(ConsoleAction.resetTwoFactor.rawValue)" }
        if let importedFrom = state.importedFrom { content["imported_from"] = importedFrom }
        if let reason = state.disabledReason, summary.status == .disabled { content["disabled_reason"] = reason }
        if let purgeAfter = state.purgeAfter { content["purge_after"] = Self.readable(purgeAfter) }
        (content["timeline"], content["chain"], content["chain_tone"]) = try await history(accountID)
        var page: [String: Any] = ["account": content]
        if let done = request.uri.queryParameters["done"].flatMap({ ConsoleAction(rawValue: String($0)) }) { page["notice"] = done.done }
        return pages.render(Self.label(summary), page, staff: staff)
    }

    /// The account's events, newest first (at most 200), with the desk's notes shown to the
    /// desk, and the hash chain's verdict.
    func history(_ accountID: UUID) async throws -> ([[String: String]], String, String) {
        guard let audit, let events = try await audit.history(accountID) else { return ([], "History not available here", "") }
        let timeline = events.suffix(200).reversed().map { event -> [String: String] in
            var row = ["time": Self.readable(event.recordedAt), "type": event.type, "actor": event.metadata.actor ?? ""]
            if AccountService.carriesStaffNotes(event.type), let payload = event.payload,
                let data = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
            {
                let who = data["operator"] as? String ?? ""
                let why = (data["reason"] as? String).map { ": \($0)" } ?? (data["view"] as? String).map { " looked (\($0))" } ?? ""
                row["note"] = who + why
            }
            return row
        }
        guard let verification = try await audit.verify(accountID) else { return (timeline, "", "") }
        return verification.ok
            ? (timeline, "✓ Hash chain verified · \(verification.events) events", "good")
            : (timeline, "✗ Hash chain broken at version \(verification.firstBadVersion ?? 0)", "bad")
    }

    func confirmation(_ request: Request, _ context: LedgerRequestContext, _ staff: StaffConsole.StaffSession) throws -> Response {
        let accountID = try SupportController.accountID(context)
        let action = try Self.action(context, staff)
        var form: [String: Any] = [
            "heading": action.heading, "explanation": action.explanation, "button": action.button, "tone": action.tone,
            "csrf": staff.csrfToken, "account_id": accountID.lowercased, "needsPasskey": action.needsAdmin,
            "user_id": PublicUserID(accountID: accountID).description,
            "action": "/console/accounts/\(accountID.lowercased)/\(action.rawValue)",
        ]
        if action == .removeMethod {
            let method = request.uri.queryParameters["method"].map(String.init) ?? ""
            _ = try SupportController.method(method)
            form["method"] = method
            form["heading"] =
                "Remove \(method == "email" ? "the email address" : method == "phone" ? "the phone number" : method.capitalized)"
        }
        if action == .removePasskey {
            guard let passkeyID = request.uri.queryParameters["passkey_id"].flatMap({ UUID(uuidString: String($0)) }) else {
                throw IdentityError.passkeyNotFound
            }
            form["passkey_id"] = passkeyID.lowercased
        }
        return pages.render(action.heading, ["confirm": form], staff: staff, ceremony: action.needsAdmin)
    }

    func act(_ form: [String: String], _ context: LedgerRequestContext, _ staff: StaffConsole.StaffSession) async throws -> Response {
        let accountID = try SupportController.accountID(context)
        let action = try Self.action(context, staff)
        let reason = try SupportDesk.checkedReason(form["reason"] ?? "")
        // What the change is about, read before the passkey is asked for: a confirmation is spent once.
        let method = action == .removeMethod ? try SupportController.method(form["method"]) : nil
        let passkeyID = form["passkey_id"].flatMap(UUID.init(uuidString:))
        if action == .removePasskey, passkeyID == nil { throw IdentityError.passkeyNotFound }
        if action.needsAdmin {
            guard let text = form["credential"],
                let credential = try? JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(text.utf8))
            else {
                throw APIError(.forbidden, .init("passkey_required"), "This change asks for your passkey again.")
            }
            try await console.confirm(staff, credential: credential)
        }
        let actor = staff.actor
        switch action {
        case .signOut: _ = try await desk.signOut(accountID, actor: actor, reason: reason)
        case .passwordReset: try await desk.sendPasswordReset(accountID, actor: actor, reason: reason)
        case .resetTwoFactor: _ = try await desk.resetTwoFactor(accountID, actor: actor, reason: reason)
        case .removeMethod:
            if let method { _ = try await desk.removeMethod(method, of: accountID, actor: actor, reason: reason) }
        case .removePasskey:
            if let passkeyID { _ = try await desk.removePasskey(passkeyID, of: accountID, actor: actor, reason: reason) }
        case .disable: _ = try await desk.disable(accountID, actor: actor, reason: reason)
        case .enable: _ = try await desk.enable(accountID, actor: actor, reason: reason)
        }
        return Self.redirect("/console/accounts/\(accountID.lowercased)?done=\(action.rawValue)")
    }

    /// The action a path names, if the staff member's role allows it.
    static func action(_ context: LedgerRequestContext, _ staff: StaffConsole.StaffSession) throws -> ConsoleAction {
        guard let action = context.parameters.get("action").flatMap(ConsoleAction.init(rawValue:)) else {
            throw APIError(.notFound, .notFound, "No such page.")
        }
        guard !action.needsAdmin || staff.role == .admin else {
            throw APIError(.forbidden, .init("insufficient_role"), "This change needs the admin role.")
        }
        return action
    }

    /// How an account is named on a page: its email, phone or handle, else its user id.
    static func label(_ summary: SupportSummary) -> String {
        summary.state.email ?? summary.state.phone ?? summary.state.handle ?? PublicUserID(accountID: summary.state.accountID).description
    }

    /// A time as staff read it: "7 Dec 2026, 12:03 UTC".
    static func readable(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return String(
            format: "%d %@ %d, %02d:%02d UTC", parts.day ?? 0, months[(parts.month ?? 1) - 1], parts.year ?? 0, parts.hour ?? 0,
            parts.minute ?? 0)
    }
}
