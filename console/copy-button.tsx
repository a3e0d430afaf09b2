import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard, and says so (or, where the browser refuses, to copy it by hand). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [said, setSaid] = useState('');
  function copy() {
    navigator.clipboard.writeText(text).then(
      () => setSaid('Copied'),
      () => setSaid('The browser would not copy: select the text and copy it'),
    );
  }
  return (
    <span class="copy">
      <button type="button" onClick={copy}>
        {label}
      </button>{' '}
      <span role="status" class="muted">
        {said}
      </span>
    </span>
  );
}
