// The part of stopword 3 the memory-quality bench uses (the package ships no types).
declare module 'stopword' {
  /** English stop words, lower-case. */
  export const eng: string[];
}
