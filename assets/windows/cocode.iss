; The Windows installer of cocode (Inno Setup 6). The release workflow
; builds it with: iscc /DVersion=X.Y.Z /DSource=<folder with cocode.exe>
; /O<output folder> assets\windows\cocode.iss
; It installs for the current person (no administrator rights needed), adds
; a Start menu entry, offers "Open with cocode" on folders, and uninstalls
; what it installed.

#ifndef Version
  #error Pass /DVersion=X.Y.Z
#endif
#ifndef Source
  #error Pass /DSource=<folder holding cocode.exe>
#endif

[Setup]
AppId={{7B0C6F1E-2C1D-4B8E-9E4A-5C0C0DE00001}
AppName=cocode
AppVersion={#Version}
AppPublisher=cocode
DefaultDirName={autopf}\cocode
DefaultGroupName=cocode
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputBaseFilename=cocode-{#Version}-x86_64-windows-setup
SetupIconFile=..\icon\cocode.ico
UninstallDisplayIcon={app}\cocode.exe
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible

[Files]
Source: "{#Source}\cocode.exe"; DestDir: "{app}"; Flags: ignoreversion

[Icons]
Name: "{group}\cocode"; Filename: "{app}\cocode.exe"; Parameters: "open"
Name: "{group}\Uninstall cocode"; Filename: "{uninstallexe}"

[Registry]
; "Open with cocode" on a folder and on a folder's background.
Root: HKA; Subkey: "Software\Classes\Directory\shell\cocode"; ValueType: string; ValueData: "Open with cocode"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Directory\shell\cocode"; ValueType: string; ValueName: "Icon"; ValueData: "{app}\cocode.exe"
Root: HKA; Subkey: "Software\Classes\Directory\shell\cocode\command"; ValueType: string; ValueData: """{app}\cocode.exe"" open ""%1"""
Root: HKA; Subkey: "Software\Classes\Directory\Background\shell\cocode"; ValueType: string; ValueData: "Open with cocode"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Directory\Background\shell\cocode"; ValueType: string; ValueName: "Icon"; ValueData: "{app}\cocode.exe"
Root: HKA; Subkey: "Software\Classes\Directory\Background\shell\cocode\command"; ValueType: string; ValueData: """{app}\cocode.exe"" open ""%V"""

[Run]
Filename: "{app}\cocode.exe"; Parameters: "open"; Description: "Start cocode"; Flags: nowait postinstall skipifsilent
