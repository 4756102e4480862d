// Small shared pieces of the pages: a section card, an error line, a field with its label.
import type { ComponentChildren } from 'preact'

export function Card ({ title, children }: { title: string, children: ComponentChildren }) {
  return <section class="card"><h2>{title}</h2>{children}</section>
}

export function ErrorLine ({ error }: { error: string | undefined }) {
  return error === undefined ? null : <p class="error" role="alert">{error}</p>
}

export function Field ({ label, children }: { label: string, children: ComponentChildren }) {
  return <label class="field"><span>{label}</span>{children}</label>
}

/** The value of a form's named field. */
export function formValue (form: HTMLFormElement, name: string): string {
  return String(new FormData(form).get(name) ?? '').trim()
}

/** Comma-separated words as a list. */
export function words (text: string): string[] {
  return text.split(',').map(s => s.trim()).filter(s => s !== '')
}
