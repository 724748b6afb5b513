export * from './constants.js';
export { mimeTypeOf, sniffImageType } from './image-type.js';
export * from './request-schemas.js';
export * from './result-schemas.js';
export * from './validate.js';
