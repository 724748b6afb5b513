import type { Catalog } from '../words.js';
import { en } from './en.js';

export const ptBR: Catalog = { ...en };
