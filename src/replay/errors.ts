/** Bad replay input (flags, files, labels): the command answers with the message and exit code 2. */
export class ReplayInputError extends Error {
  override name = 'ReplayInputError';
}
