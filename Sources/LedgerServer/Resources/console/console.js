// The console's passkey ceremonies, and nothing else (docs/support.md "The console"): sign-in,
// registering the passkey an invitation allows, and showing it again before an admin change.
// Every other page works without JavaScript.
"use strict";

async function postJSON(path, body) {
  const csrf = document.querySelector("input[name=csrf]");
  const headers = { "Content-Type": "application/json" };
  if (csrf) headers["X-CSRF-Token"] = csrf.value;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body || {}), credentials: "same-origin" });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.message || "That did not work. Try again.");
  return answer;
}

function show(message) {
  let problem = document.getElementById("problem");
  if (!problem) {
    problem = document.createElement("p");
    problem.id = "problem";
    problem.className = "problem";
    problem.setAttribute("role", "alert");
    document.querySelector("main").prepend(problem);
  }
  problem.textContent = message;
}

async function signIn() {
  const options = await postJSON("/console/sign-in/options");
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
  const answer = await postJSON("/console/sign-in", { credential: credential.toJSON() });
  window.location.assign(answer.redirect);
}

async function register(token) {
  const options = await postJSON("/console/invitation/options", { token });
  const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
  const answer = await postJSON("/console/invitation", { token, credential: credential.toJSON() });
  window.location.assign(answer.redirect);
}

async function confirmThen(form) {
  const options = await postJSON("/console/confirm/options");
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
  form.querySelector("#credential").value = JSON.stringify(credential.toJSON());
  form.submit();
}

document.addEventListener("DOMContentLoaded", () => {
  const signInButton = document.querySelector("[data-ceremony=sign-in]");
  if (signInButton) signInButton.addEventListener("click", () => signIn().catch((error) => show(error.message)));
  const registerButton = document.querySelector("[data-ceremony=register]");
  if (registerButton) {
    registerButton.addEventListener("click", () => register(registerButton.dataset.token).catch((error) => show(error.message)));
  }
  const confirmForm = document.querySelector("form[data-ceremony=confirm]");
  if (confirmForm) {
    confirmForm.addEventListener("submit", (event) => {
      if (confirmForm.querySelector("#credential").value) return;
      event.preventDefault();
      if (!confirmForm.reportValidity()) return;
      confirmThen(confirmForm).catch((error) => show(error.message));
    });
  }
});
